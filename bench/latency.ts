// Create → handler start: the time from sending a create to the operator's handler running,
// p50 and p90 over sequential creates. Baseline: a bare `fetch` watch on the same resource,
// from the same create to its ADDED line arriving (the floor any watcher pays).
// The operator runs in this process; the sandbox in its own (sandbox-server.ts), so its CPU is
// not charged to the operator on a 2-core machine. KOBUN_BENCH_OPERATOR_ROOT: the checkout
// whose operator is imported (common.ts operatorRoot), to compare two in one session.
// operatorCpuUsPerCreate: this process's CPU per timed create (client, watch, operator), steadier
// than wall time on a loaded machine. KOBUN_BENCH_REQUESTS=1 prints the sandbox's request counts.
// Target (DESIGN.md): p50 < 2 ms.

import { join } from "node:path";
import { median, operatorRoot, report, root, round, spawnSandbox } from "./common.ts";

const CREATES = Number(process.env.KOBUN_BENCH_CREATES ?? 200);
const configmaps = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

// the operator's modules, from the checkout measured (types: this checkout's)
const from = <T>(path: string): Promise<T> => import(join(operatorRoot, path));
const { KubeClient } = await from<typeof import("../src/kube/client.ts")>("src/kube/client.ts");
const { Registry } = await from<typeof import("../src/declaring/registry.ts")>("src/declaring/registry.ts");
const { resolveSettings } = await from<typeof import("../src/config/index.ts")>("src/config/index.ts");
const { run } = await from<typeof import("../src/runtime/operator.ts")>("src/runtime/operator.ts");
const { silentLogger } = await from<typeof import("../src/util/log.ts")>("src/util/log.ts");

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** this process's CPU µs since `start`: with the sandbox elsewhere, the client's and the operator's */
const cpuSince = (start: NodeJS.CpuUsage) => ((u) => u.user + u.system)(process.cpuUsage(start));
let bareCpuUs = 0;
let operatorCpuUs = 0;

const sandbox = await spawnSandbox(10_000);
const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
try {
  for (const ns of ["kobun", "bare"]) await client.create({ ...configmaps, plural: "namespaces", kind: "Namespace", namespaced: false }, null, { metadata: { name: ns } });

  // Baseline: a bare watch stream, timing each ADDED line.
  const bare: number[] = [];
  {
    const stop = new AbortController();
    let arrived: (() => void) | undefined;
    const response = await fetch(`${sandbox.url}/api/v1/namespaces/bare/configmaps?watch=true&allowWatchBookmarks=true`, { signal: stop.signal });
    const reading = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body!) if (decoder.decode(chunk, { stream: true }).includes('"ADDED"')) arrived?.();
      } catch {}
    })();
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < CREATES; i++) {
      const seen = new Promise<void>((resolve) => (arrived = resolve));
      const t0 = performance.now();
      await client.create(configmaps, "bare", { metadata: { name: `b-${i}` } });
      await seen;
      bare.push(performance.now() - t0);
    }
    bareCpuUs = cpuSince(cpu0) / CREATES;
    stop.abort();
    await reading;
  }

  // kobun: the whole operator (watcher → queue → handler), default settings.
  const operator: number[] = [];
  {
    const registry = new Registry();
    let started: (() => void) | undefined;
    registry.on.create("v1/configmaps", () => void started?.(), { id: "timed" });
    const stop = new AbortController();
    let ready!: () => void;
    const isReady = new Promise<void>((resolve) => (ready = resolve));
    const running = run({
      signal: stop.signal, client, registry, logger: silentLogger,
      settings: resolveSettings({ flags: { namespaces: ["kobun"], standalone: true } }),
      onStarted: () => ready(),
    });
    await isReady;
    // First object: wait for the initial list to finish so that only live creates are timed.
    const warm = new Promise<void>((resolve) => (started = resolve));
    await client.create(configmaps, "kobun", { metadata: { name: "warm-up" } });
    await warm;
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < CREATES; i++) {
      const seen = new Promise<void>((resolve) => (started = resolve));
      const t0 = performance.now();
      await client.create(configmaps, "kobun", { metadata: { name: `k-${i}` } });
      await seen;
      operator.push(performance.now() - t0);
    }
    operatorCpuUs = cpuSince(cpu0) / CREATES;
    stop.abort();
    await running;
  }
  if (process.env.KOBUN_BENCH_REQUESTS) console.error(JSON.stringify(await sandbox.ask("requests")));

  report("latency", {
    creates: CREATES,
    ...(operatorRoot === root ? {} : { operatorRoot }),
    createToHandlerStartP50Ms: round(median(operator)),
    createToHandlerStartP90Ms: round(percentile(operator, 0.9)),
    bareWatchEventP50Ms: round(median(bare)),
    bareWatchEventP90Ms: round(percentile(bare, 0.9)),
    ratioP50: round(median(operator) / median(bare)),
    // CPU of this process per create (client + watch + operator); steadier than wall time on a loaded machine
    operatorCpuUsPerCreate: round(operatorCpuUs, 1),
    bareCpuUsPerCreate: round(bareCpuUs, 1),
    targetP50Ms: 2,
  });
} finally {
  client.close();
  await sandbox.stop();
}
