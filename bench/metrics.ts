// Bench: what the metrics cost. (1) In-process, the hot path: a watcher feeding a reconciler
// with one create handler over N pre-existing objects, with the observers wired (rest_client_*,
// kobun_watch_*, controller_runtime_*, kobun_handler_*, workqueue_*) and without, alternating rounds, CPU per
// object and wall time. (2) The binary: exec → first LIST and idle RSS with the probe listener
// (/metrics, the event-loop tick) on and off. The sandbox runs in a child process (its CPU is
// not counted), as in handling.ts.
//
//   bun bench/metrics.ts [N] [rounds]      (default: 2000 objects, 3 rounds each way)

import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { resolveSettings } from "../src/config/index.ts";
import { KubeClient } from "../src/kube/client.ts";
import { Registry } from "../src/declaring/registry.ts";
import { Health } from "../src/observability/health.ts";
import { Reconciler } from "../src/reconciling/reconciler.ts";
import { reconcileMetrics, requestMetrics, watchMetrics, workqueueMetrics } from "../src/runtime/metrics.ts";
import { startSandbox } from "@kobun/sandbox";
import { Watcher } from "../src/watching/watcher.ts";
import type { Resource } from "../src/kube/types.ts";
import { ensureBinary, installExampleCRD, lineReader, median, report, round } from "./common.ts";

const CONCURRENCY = 100;
const CRDS: Resource = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true };
const NAMESPACES: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };

/** Rounds alternating `off` and `on` against a sandbox in a child process; `one(...)` is one of them. */
export async function alternating(rounds: number, one: (client: KubeClient, resource: Resource, mode: "off" | "on", r: number) => Promise<{ cpuMsPerObject: number; wallMs: number }>) {
  return sandboxChild(async (client, resource) => {
    const cpu: Record<"off" | "on", number[]> = { off: [], on: [] };
    const wall: Record<"off" | "on", number[]> = { off: [], on: [] };
    for (let r = 0; r < rounds; r++) {
      for (const mode of r % 2 ? (["on", "off"] as const) : (["off", "on"] as const)) {
        const figures = await one(client, resource, mode, r);
        cpu[mode].push(figures.cpuMsPerObject);
        wall[mode].push(figures.wallMs);
      }
    }
    return {
      rounds,
      cpuMsPerObject: { off: round4(median(cpu.off)), on: round4(median(cpu.on)), all: { off: cpu.off.map(round4), on: cpu.on.map(round4) } },
      wallMs: { off: round(median(wall.off)), on: round(median(wall.on)) },
      ratioOnToOff: { cpu: round(median(cpu.on) / median(cpu.off)), wall: round(median(wall.on) / median(wall.off)) },
    };
  });
}

const round4 = (x: number) => round(x, 4);

async function sandboxChild<R>(body: (client: KubeClient, resource: Resource) => Promise<R>): Promise<R> {
  const child = Bun.spawn([process.execPath, `${import.meta.dir}/handling.ts`, "--sandbox-child"], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const lines = lineReader(child.stdout);
  const { kubeconfigPath } = JSON.parse(await lines.next());
  const client = await KubeClient.connect({ kubeconfig: kubeconfigPath });
  try {
    await client.create(CRDS, null, parse(readFileSync(new URL("../handlers/kobunexample.crd.yaml", import.meta.url), "utf8")));
    return await body(client, await client.resolve("kobunexamples.kobun.dev/v1"));
  } finally {
    child.stdin.write("stop\n");
    child.stdin.flush();
    await child.exited;
    client.close();
  }
}

async function hotPath(n: number, rounds: number): Promise<Record<string, unknown>> {
  return { objects: n, ...(await alternating(rounds, (client, resource, mode, r) => operatorRound(client, resource, n, `${mode}-${r}`, mode === "on"))) };
}

/** One operator round over n new objects in their own namespace: CPU per object and wall time (bench/tracing.ts reuses it). */
export async function operatorRound(client: KubeClient, resource: Resource, n: number, tag: string, observed: boolean) {
  const ns = `metrics-${tag}`;
  await client.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  await pool(n, (i) => client.create(resource, ns, { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: `obj-${i}`, namespace: ns }, spec: { size: i } }));
  Bun.gc(true);
  const health = new Health();
  const registry = new Registry();
  let handled = 0;
  let allHandled!: () => void;
  const done = new Promise<void>((resolve) => (allHandled = resolve));
  registry.on.create(resource, ({ name }) => {
    if (++handled === n) allHandled();
    return { message: `hello ${name}` };
  }, { id: "create_fn" });
  const unobserve = observed ? client.observe(requestMetrics(health.metrics)) : () => {};
  const reconciler = new Reconciler({
    client, resource, registry, settings: resolveSettings({ fileData: { workers: { batchWindow: 0.1, limit: CONCURRENCY, idleTimeout: 5 } } }),
    ...(observed ? { observers: { cycles: reconcileMetrics(health.metrics, "kobunexamples.kobun.dev", CONCURRENCY), queue: workqueueMetrics(health.metrics, "kobunexamples.kobun.dev") } } : {}),
  });
  const watcher = new Watcher(client, resource, { namespace: ns, ...(observed ? { observer: watchMetrics(health.metrics, "kobunexamples.kobun.dev") } : {}) });
  const ac = new AbortController();
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const watching = (async () => {
    for await (const event of watcher.events(ac.signal)) reconciler.accept(event);
  })();
  await done;
  await reconciler.settled();
  const wallMs = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  ac.abort();
  await watching.catch(() => {});
  await reconciler.close(1000);
  unobserve();
  if (observed && !health.exposition().includes(`controller_runtime_reconcile_total{controller="kobunexamples.kobun.dev",result="success"} ${n}`)) {
    throw new Error("bench: the observed round did not count every reconcile");
  }
  return { cpuMsPerObject: (used.user + used.system) / 1000 / n, wallMs };
}

/** exec → first LIST and idle RSS of the binary, with and without the probe listener. */
async function binaryStart(runs: number): Promise<Record<string, unknown>> {
  const binary = ensureBinary();
  const sandbox = await startSandbox();
  try {
    await installExampleCRD(sandbox);
    const figures: Record<string, { firstListMs: number[]; idleRssMiB: number[] }> = { off: { firstListMs: [], idleRssMiB: [] }, on: { firstListMs: [], idleRssMiB: [] } };
    for (let i = 0; i < runs; i++) {
      for (const mode of i % 2 ? (["on", "off"] as const) : (["off", "on"] as const)) {
        sandbox.stats.reset();
        const listed = sandbox.waitFor((r) => (r.verb === "list" || r.verb === "watch") && r.path.includes("kobunexamples"), 20_000);
        const t = performance.now();
        const args = [binary, "run", "--kubeconfig", sandbox.kubeconfigPath, "--standalone", "-A", "-q", ...(mode === "on" ? ["--liveness", "http://127.0.0.1:0/healthz"] : [])];
        const child = Bun.spawn(args, { env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" }, stdout: "ignore", stderr: "ignore" });
        await listed;
        figures[mode]!.firstListMs.push(performance.now() - t);
        await Bun.sleep(500); // idle RSS is a reading after start-up settles, not a synchronisation
        const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
        figures[mode]!.idleRssMiB.push(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
        child.kill("SIGTERM");
        await child.exited;
      }
    }
    const m = (mode: string, key: "firstListMs" | "idleRssMiB") => round(median(figures[mode]![key]));
    return { runs, execToFirstListMs: { off: m("off", "firstListMs"), on: m("on", "firstListMs") }, idleRssMiB: { off: m("off", "idleRssMiB"), on: m("on", "idleRssMiB") } };
  } finally {
    await sandbox.stop();
  }
}

async function pool(n: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, n) }, async () => {
    while (next < n) await fn(next++);
  }));
}

if (import.meta.main) {
  const n = Number(process.argv[2] ?? 2000);
  const rounds = Number(process.argv[3] ?? 3);
  report("metrics", { hotPath: await hotPath(n, rounds), binary: await binaryStart(5) });
}
