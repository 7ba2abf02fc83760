// Bench for sharding (issue 16): throughput of 1, 2 and 3 sharded replicas for a handler that
// waits 20 ms on I/O, and the bytes each of 3 replicas receives with server-side sharding (the
// sandbox applies shardSelector) vs client-side filtering (it ignores it). Run:
// `bun bench/sharding.ts` (prints one JSON line, saves it under "sharding" in results.json).
// `SHARDS=12` sets the shard count (default 24), `SWEEP=12,16,24,48` adds a 3-replica row per
// count, `N`, `RUNS`; under `nice -n -10` it is saved as "sharding_niced".
//
// Setup: the sandbox in this process; each replica a process of its own (dist/kobun-e2e, built
// every run, whose handlers/spans.ts records each run's start and end to a file), as replicas
// run in production: in-process, every replica shared this one event loop, and its CPU, not
// sharding, bounded 3 replicas. workers.limit 4 per replica, so the 20 ms wait bounds a replica.
// Timed from the first create (after the shards settled at their quotas) to the last run's
// end; median of RUNS. Bytes: each replica behind a TCP proxy of its own that counts them.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { getPriority, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient } from "../src/kube/client.ts";
import type { Resource } from "../src/kube/types.ts";
import { startSandbox } from "../src/sandbox/index.ts";
import { installCrds } from "../test/e2e/harness/kube.ts";
import { KOBUN_E2E, Operator } from "../test/e2e/harness/operator.ts";
import { proxiedKubeconfig } from "../test/runtime/lease-replicas.ts";
import { startTcpProxy, type TcpProxy } from "../test/runtime/tcp-proxy.ts";
import { median, report, root, round, saveResults, until } from "./common.ts";

const N = Number(process.env.N ?? 1200);
const RUNS = Number(process.env.RUNS ?? 3);
const SHARDS = Number(process.env.SHARDS ?? 24); // the default: even over 1, 2, 3, 4, 6, 8, 12 replicas
const SWEEP = (process.env.SWEEP ?? "").split(",").filter(Boolean).map(Number);
const LIMIT = 4;
const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const E2E_CRDS = join(root, "test/e2e/handlers/kobunflaky.crd.yaml");

function ensureE2eBinary(): void {
  // Always built (≈ 1 s): a binary left from an older checkout measured old code (and failed).
  const built = Bun.spawnSync([process.execPath, "run", join(root, "build.ts"), "--handlers", "test/e2e/handlers", "--outfile", KOBUN_E2E], { cwd: root, stdout: "inherit", stderr: "inherit" });
  if (built.exitCode !== 0) throw new Error("bench: building dist/kobun-e2e failed");
}

/** Ends recorded so far in a replica's spans file (a line per run's start and one per end). */
const ends = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split('"end"').length - 1 : 0);

/** One run: `replicas` processes handle N objects; the wall time and each replica's bytes received (when proxied). */
async function once(replicas: number, shards: number, options: { shardSelectors: boolean; proxied: boolean }): Promise<{ ms: number; createMs: number; bytes: number[] }> {
  const sandbox = await startSandbox({ shardSelectors: options.shardSelectors });
  const admin = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const dir = mkdtempSync(join(tmpdir(), "kobun-bench-shards-"));
  const ops: Operator[] = [];
  const proxies: TcpProxy[] = [];
  try {
    await installCrds(admin, E2E_CRDS);
    const config = join(dir, "kobun.yaml");
    writeFileSync(config, JSON.stringify({
      sharding: { replicas: "auto", shards },
      peering: { name: "bench", freezeGracePeriod: "500ms", lease: { duration: "3s", renewDeadline: "2s", retryPeriod: "250ms" } },
      workers: { batchWindow: 0, limit: LIMIT },
    }));
    const files = Array.from({ length: replicas }, (_, i) => join(dir, `r${i}.jsonl`));
    for (const [i, file] of files.entries()) {
      let kubeconfig = sandbox.kubeconfigPath;
      if (options.proxied) {
        const proxy = startTcpProxy(new URL(sandbox.url));
        proxies.push(proxy);
        kubeconfig = join(dir, `kubeconfig-${i}.yaml`);
        writeFileSync(kubeconfig, proxiedKubeconfig(readFileSync(sandbox.kubeconfigPath, "utf8"), proxy.url), { mode: 0o600 });
      }
      ops.push(new Operator(`bench-r${i}`, KOBUN_E2E, ["run", "--kubeconfig", kubeconfig, "-q", "-n", "default", "--config", config], { KOBUN_E2E_SPANS: file }));
    }
    const quotas = () => {
      const held = new Map<string, number>();
      for (const l of sandbox.store.objects("coordination.k8s.io", "leases", "default") as { metadata: { labels?: Record<string, string> }; spec?: { holderIdentity?: string } }[]) {
        const holder = l.metadata.labels?.["kobun.dev/shard-role"] === "shard" ? l.spec?.holderIdentity : undefined;
        if (holder) held.set(holder, (held.get(holder) ?? 0) + 1);
      }
      const counts = [...held.values()];
      return counts.length === replicas && counts.reduce((a, b) => a + b, 0) === shards && Math.max(...counts) - Math.min(...counts) <= 1;
    };
    await until(quotas, 30_000, `${shards} shards held at their quotas`);
    await Bun.sleep(300); // the replicas' streams restarted with the settled ranges
    const before = proxies.map((p) => p.bytesReceived);
    const t0 = performance.now();
    for (let i = 0; i < N; i += 25) {
      await Promise.all(Array.from({ length: Math.min(25, N - i) }, (_, j) => admin.create(CONFIGMAPS, "default", {
        apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i + j}`, labels: { "e2e.kobun.dev/spans": "yes" } }, data: { ms: "20" },
      })));
    }
    const createMs = performance.now() - t0;
    // Read every 10 ms, not every 1 ms: the reads share this process with the sandbox.
    const deadline = t0 + 120_000;
    while (files.reduce((sum, f) => sum + ends(f), 0) < N) {
      if (performance.now() > deadline) throw new Error(`bench: ${N} objects not handled in time`);
      await Bun.sleep(10);
    }
    return { ms: performance.now() - t0, createMs, bytes: proxies.map((p, i) => p.bytesReceived - before[i]!) };
  } finally {
    await Promise.all(ops.map((op) => op.stop("SIGTERM", 10_000).catch(() => {})));
    for (const p of proxies) p.close();
    admin.close();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every run's wall time (ms), by row: the spread says how busy the machine was. */
const wallMs: Record<string, number[]> = {};
/** How long creating the N objects took in each run (a bound on the throughput measured). */
const createMs: Record<string, number[]> = {};

async function throughput(replicas: number, shards: number): Promise<number> {
  const times: number[] = [];
  const creates: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const { ms, createMs } = await once(replicas, shards, { shardSelectors: true, proxied: false });
    times.push(ms);
    creates.push(Math.round(createMs));
  }
  wallMs[`replicas_${replicas}_shards_${shards}`] = times.map((t) => Math.round(t));
  createMs[`replicas_${replicas}_shards_${shards}`] = creates;
  return Math.round((N / median(times)) * 1000);
}

ensureE2eBinary();
const perReplicas: Record<string, number> = {};
for (const replicas of [1, 2, 3]) perReplicas[`replicas_${replicas}_objects_per_s`] = await throughput(replicas, SHARDS);
const sweep: Record<string, number> = {};
for (const shards of SWEEP) sweep[`shards_${shards}_replicas_3_objects_per_s`] = await throughput(3, shards);
const server = await once(3, SHARDS, { shardSelectors: true, proxied: true });
const client = await once(3, SHARDS, { shardSelectors: false, proxied: true });
const figures = {
  objects: N, shards: SHARDS, handler_ms: 20, workers_limit: LIMIT, runs: RUNS, niceness: getPriority(),
  ...perReplicas,
  speedup_2_vs_1: round(perReplicas.replicas_2_objects_per_s! / perReplicas.replicas_1_objects_per_s!),
  speedup_3_vs_1: round(perReplicas.replicas_3_objects_per_s! / perReplicas.replicas_1_objects_per_s!),
  // The fastest run of each row: on a busy shared machine the least disturbed one.
  ...Object.fromEntries([1, 2, 3].map((r) => [`replicas_${r}_best_objects_per_s`, Math.round((N / Math.min(...wallMs[`replicas_${r}_shards_${SHARDS}`]!)) * 1000)])),
  speedup_3_vs_1_best: round(Math.min(...wallMs[`replicas_1_shards_${SHARDS}`]!) / Math.min(...wallMs[`replicas_3_shards_${SHARDS}`]!)),
  ...(SWEEP.length ? { sweep } : {}),
  wall_ms: wallMs, create_ms: createMs, load_average_1m: round(loadavg()[0]!),
  bytes_per_replica_server_side: server.bytes, bytes_per_replica_client_side: client.bytes,
  bytes_ratio_client_vs_server: round(client.bytes.reduce((a, b) => a + b, 0) / server.bytes.reduce((a, b) => a + b, 0)),
};
report("sharding", figures);
// `nice -n -10 bun bench/sharding.ts` (the machine is shared) is kept beside the plain run.
if (!process.env.KOBUN_BENCH_NO_SAVE) saveResults(getPriority() < 0 ? "sharding_niced" : "sharding", figures);
