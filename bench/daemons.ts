// Bench for daemons and timers (issue 13): N objects (1,000), each with one daemon (waiting on
// its signal) and one timer every 1 s, and the operator's event-loop lag while they all run.
// Run: `bun bench/daemons.ts` (prints one JSON object). WRITE=1: the timers return a result,
// so each tick is a PATCH (N PATCHes a second); by default they only compute.
//
// The sandbox runs in a child process (this file with --sandbox), so the lag measured here is
// the operator's alone. Lag: a 10 ms timer re-armed for DURATION seconds once every daemon has
// started; lag = how late each one fired; p50/p99/max reported.

import { resolveSettings } from "../src/config/index.ts";
import { Registry } from "../src/handling/registry.ts";
import { KubeClient } from "../src/kube/client.ts";
import type { Resource } from "../src/kube/types.ts";
import { run } from "../src/runtime/operator.ts";
import { startSandbox } from "../src/sandbox/index.ts";
import { Logger, stderrSink } from "../src/util/log.ts";

if (process.argv.includes("--sandbox")) {
  const sandbox = await startSandbox();
  console.log(sandbox.kubeconfigPath);
  await new Promise(() => {}); // until killed by the parent
}

const N = Number(process.env.N ?? 1000);
const DURATION = Number(process.env.DURATION ?? 15);
const WRITE = process.env.WRITE === "1";
const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

const child = Bun.spawn([process.execPath, import.meta.path, "--sandbox"], { stdout: "pipe", stderr: "inherit" });
const reader = child.stdout.getReader();
const { value } = await reader.read();
const kubeconfig = new TextDecoder().decode(value).trim();
const client = await KubeClient.connect({ kubeconfig });

const registry = new Registry();
let daemons = 0;
let ticks = 0;
registry.on.daemon("v1/configmaps", async ({ signal }) => {
  daemons++;
  await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  daemons--;
}, { id: "bench-daemon", finalizer: false, labels: { bench: "daemons" } });
registry.on.timer("v1/configmaps", ({ name }) => {
  ticks++;
  return WRITE ? { tick: ticks, name } : undefined;
}, { id: "bench-timer", interval: 1, finalizer: false, labels: { bench: "daemons" } });

const stop = new AbortController();
const operator = run({
  signal: stop.signal, client, registry, logger: new Logger(stderrSink("warn")),
  settings: resolveSettings({ flags: { namespaces: ["default"], standalone: true } }),
});
for (let i = 0; i < N; i += 50) {
  await Promise.all(Array.from({ length: Math.min(50, N - i) }, (_, j) =>
    client.create(CONFIGMAPS, "default", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `d-${i + j}`, labels: { bench: "daemons" } } })));
}
const startedBy = performance.now() + 60_000;
while (daemons < N) {
  if (performance.now() > startedBy) throw new Error(`bench: only ${daemons} of ${N} daemons started`);
  await Bun.sleep(10);
}

const lags: number[] = [];
const ticksBefore = ticks;
const cpuBefore = process.cpuUsage();
const t0 = performance.now();
await new Promise<void>((resolve) => {
  let expected = performance.now() + 10;
  const arm = () => setTimeout(() => {
    const now = performance.now();
    lags.push(now - expected);
    if (now - t0 >= DURATION * 1000) return resolve();
    expected = now + 10;
    arm();
  }, 10);
  arm();
});
const elapsed = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const sorted = lags.sort((a, b) => a - b);
const at = (q: number) => Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2));
const result = {
  bench: "daemons", objects: N, daemons: N, timers: N, timer_interval_s: 1, timers_write: WRITE, seconds: Number(elapsed.toFixed(1)),
  timer_calls_per_s: Math.round((ticks - ticksBefore) / elapsed),
  lag_ms_p50: at(0.5), lag_ms_p99: at(0.99), lag_ms_max: at(1), samples: sorted.length,
  cpu_percent: Number((((cpu.user + cpu.system) / 1e6 / elapsed) * 100).toFixed(1)),
  rss_mb: Math.round(process.memoryUsage().rss / 2 ** 20),
};
const stopAt = performance.now();
stop.abort();
await operator;
const stopMs = performance.now() - stopAt;
console.log(JSON.stringify({ ...result, shutdown_ms: Math.round(stopMs), daemons_left: daemons }));
client.close();
child.kill();
process.exit(0);
