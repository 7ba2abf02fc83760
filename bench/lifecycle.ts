// Seed 003 in figures: time from SIGTERM to process exit of the compiled operator holding 50
// idle watch streams (one resource in 50 namespaces), idle and with handlers in flight.
// Idle: the example operator (dist/kobun). In flight: an operator built from
// test/runtime/handlers, whose "polite" handler runs until its signal aborts; one is running
// in each of the 50 namespaces when SIGTERM arrives.
// Baseline: the same binary's `kobun version`, i.e. the cost of a process that only starts
// and exits. The sandbox runs in its own process (sandbox-server.ts), so its CPU does not
// compete with the operator's shutdown in this one. KOBUN_BENCH_OPERATOR_ROOT: the checkout
// whose binaries are built and measured (common.ts operatorRoot).
// Target (DESIGN.md): < 30 ms idle.

import { ensureBinary, installExampleCRD, median, operatorRoot, report, root, round, spawnSandbox, until } from "./common.ts";

const RUNS = Number(process.env.KOBUN_BENCH_RUNS ?? 5);
const NAMESPACES = 50;

async function timeToExit(binary: string, kubeconfig: string, namespaces: string[], sandboxWatches: () => Promise<number>, busy: ((started: () => number) => Promise<void>) | null): Promise<number> {
  const child = Bun.spawn([binary, "run", "--kubeconfig", kubeconfig, "--standalone", ...namespaces.flatMap((ns) => ["-n", ns])], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
    stdout: "ignore",
    stderr: "pipe",
  });
  // Count handler starts from the operator's log (it logs one line per start).
  let started = 0;
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) started += decoder.decode(chunk).split("polite handler started").length - 1;
  })();
  await until(async () => (await sandboxWatches()) >= namespaces.length, 20_000, `${namespaces.length} open watches`);
  if (busy) await busy(() => started);
  const sent = performance.now();
  child.kill("SIGTERM");
  const code = await child.exited;
  const ms = performance.now() - sent;
  if (code !== 0) throw new Error(`bench: operator exited with ${code}`);
  return ms;
}

export async function benchLifecycle(): Promise<void> {
  const binary = ensureBinary(operatorRoot);
  const sandbox = await spawnSandbox();
  try {
    await installExampleCRD(sandbox);
    const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `bench-${i}`);
    for (const name of namespaces) {
      await fetch(`${sandbox.url}/api/v1/namespaces`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name } }) });
    }
    const watches = () => sandbox.watches();
    const baseline: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await Bun.spawn([binary, "version"], { stdout: "ignore" }).exited;
      baseline.push(performance.now() - started);
    }
    const idle: number[] = [];
    for (let i = 0; i < RUNS; i++) idle.push(await timeToExit(binary, sandbox.kubeconfigPath, namespaces, watches, null));
    const afterExit = await watches();

    const inFlightBinary = ensureBinary(operatorRoot, "test/runtime/handlers", "dist/kobun-lifecycle-bench");
    const inFlight: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      inFlight.push(await timeToExit(inFlightBinary, sandbox.kubeconfigPath, namespaces, watches, async (started) => {
        for (const ns of namespaces) {
          await fetch(`${sandbox.url}/api/v1/namespaces/${ns}/configmaps`, {
            method: "POST", headers: { "content-type": "application/json" },
            body: JSON.stringify({ metadata: { generateName: "busy-", labels: { lifecycle: "polite" } } }),
          });
        }
        await until(() => started() >= namespaces.length, 20_000, `${namespaces.length} handlers running`);
      }));
      // Each run starts from no pending objects (the aborted handlers would run again).
      for (const ns of namespaces) await fetch(`${sandbox.url}/api/v1/namespaces/${ns}/configmaps?labelSelector=lifecycle%3Dpolite`, { method: "DELETE" });
    }
    report("lifecycle", {
      watches: NAMESPACES,
      ...(operatorRoot === root ? {} : { operatorRoot }),
      runs: RUNS,
      sigtermToExitIdleMs: round(median(idle)),
      sigtermToExitWith50HandlersInFlightMs: round(median(inFlight)),
      processStartExitBaselineMs: round(median(baseline)),
      ratioToBaseline: round(median(idle) / median(baseline)),
      openWatchesAfterExit: afterExit,
      targetMs: 30,
    });
  } finally {
    await sandbox.stop();
  }
}

if (import.meta.main) await benchLifecycle();
