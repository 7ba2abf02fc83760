// Seed 003 in figures: time from SIGTERM to process exit of the compiled operator holding 50
// idle watch streams (one resource in 50 namespaces), idle and with handlers in flight.
// Baseline: the same binary's `kobun version`, i.e. the cost of a process that only starts
// and exits. Target (DESIGN.md): < 30 ms idle.

import { startSandbox } from "../src/sandbox/index.ts";
import { ensureBinary, installExampleCRD, median, report, round, until } from "./common.ts";

const RUNS = Number(process.env.KOBUN_BENCH_RUNS ?? 5);
const NAMESPACES = 50;

async function timeToExit(binary: string, kubeconfig: string, namespaces: string[], sandboxWatches: () => number, busy: (() => Promise<void>) | null): Promise<number> {
  const child = Bun.spawn([binary, "run", "--kubeconfig", kubeconfig, "--standalone", "-q", ...namespaces.flatMap((ns) => ["-n", ns])], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
    stdout: "ignore",
    stderr: "ignore",
  });
  await until(() => sandboxWatches() >= namespaces.length, 20_000, `${namespaces.length} open watches`);
  if (busy) await busy();
  const sent = performance.now();
  child.kill("SIGTERM");
  const code = await child.exited;
  const ms = performance.now() - sent;
  if (code !== 0) throw new Error(`bench: operator exited with ${code}`);
  return ms;
}

export async function benchLifecycle(): Promise<void> {
  const binary = ensureBinary();
  const sandbox = await startSandbox();
  try {
    await installExampleCRD(sandbox);
    const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `bench-${i}`);
    for (const name of namespaces) {
      await fetch(`${sandbox.url}/api/v1/namespaces`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name } }) });
    }
    const watches = () => sandbox.stats.openWatches();
    const baseline: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await Bun.spawn([binary, "version"], { stdout: "ignore" }).exited;
      baseline.push(performance.now() - started);
    }
    const idle: number[] = [];
    for (let i = 0; i < RUNS; i++) idle.push(await timeToExit(binary, sandbox.kubeconfigPath, namespaces, watches, null));
    const afterExit = watches();
    report("lifecycle", {
      watches: NAMESPACES,
      runs: RUNS,
      sigtermToExitIdleMs: round(median(idle)),
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
