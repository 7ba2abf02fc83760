// Bench for sharding (issue 16): throughput of 1, 2 and 3 sharded replicas for a handler that
// waits 20 ms on I/O, and the bytes each of 3 replicas receives with server-side sharding (the
// sandbox applies shardSelector) vs client-side filtering (it ignores it). Run:
// `bun bench/sharding.ts` (prints one JSON line, saves it under "sharding" in results.json).
// `SHARDS=12` sets the shard count (default 24), `SWEEP=12,16,24,48` adds a 3-replica row per
// count, `N` (default 3,000), `RUNS`, `LEASES=short`; under `nice -n -10` it is saved as
// "sharding_niced".
//
// Setup: each replica a process of its own (dist/kobun-e2e, built every run, whose
// handlers/spans.ts records each run's start and end to a file), as replicas run in production:
// in-process, every replica shared this one event loop, and its CPU, not sharding, bounded 3
// replicas. The headline's sandbox is a process of its own too (sandbox-server.ts), as an API
// server is; the same rows with the sandbox in this process (sharing its CPU with the creates
// and the bookkeeping) are printed beside it, run for run interleaved (`SANDBOX=here` swaps
// which is the headline). The shard Leases have peering.lease's default timings.
// workers.limit 4 per replica, so the 20 ms wait bounds a replica at 200 objects/s. Timed from
// the first create (after the shards settled at their quotas) to the last run's end; median of
// RUNS (the headline). Beside it, from the runs' starts and ends: the
// steady rate while every replica is busy (from the last replica's first start to the first
// replica's last end), each replica's share and its rate against its 200/s ceiling (the
// slowest replica's share sets the wall time), the CPU per object of the sandbox, of the
// replicas together and of this process (where the 2 cores go), and the requests per object.
// Bytes: each replica behind a TCP proxy of its own that counts them (the sandbox in this
// process: bytes do not depend on where it runs, and only it can be told to ignore shardSelector).

import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from "node:fs";
import { getPriority, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient } from "../src/kube/client.ts";
import type { Resource } from "../src/kube/types.ts";
import { startSandbox } from "@kobun/sandbox";
import { installCrds } from "../test/e2e/harness/kube.ts";
import { KOBUN_E2E, Operator } from "../test/e2e/harness/operator.ts";
import { proxiedKubeconfig } from "../test/runtime/lease-replicas.ts";
import { startTcpProxy, type TcpProxy } from "../test/runtime/tcp-proxy.ts";
import { spansOf, type Span } from "../test/e2e/harness/shard-spans.ts";
import { report, root, round, saveResults, spawnSandbox } from "./common.ts";

// 3,000 objects, as the e2e: a replica's share of N hashed uids spreads as √(2/9N)
// (±0.86 % at 3,000, ±1.36 % at 1,200) and the slowest replica's share sets the wall time; the
// ramp of the first creates and the last replica's tail weigh less too.
const N = Number(process.env.N ?? 3000);
const RUNS = Number(process.env.RUNS ?? 3);
const SHARDS = Number(process.env.SHARDS ?? 24); // the default: even over 1, 2, 3, 4, 6, 8, 12 replicas
const SWEEP = (process.env.SWEEP ?? "").split(",").filter(Boolean).map(Number);
/**
 * The shard Leases' timings: peering.lease's defaults (15 s / 10 s / 2 s), what `replicas: auto`
 * runs with, unless `LEASES=short` (3 s / 2 s / 250 ms, the e2e's kind, for fast takeovers): their
 * renewals, a PUT per held shard and replica every 250 ms and a watch event of each for every
 * replica, were 0.23–0.56 Lease PUTs per object handled. Only a takeover after a death waits for
 * an expiry, and this bench has none.
 */
const SHORT_LEASES = process.env.LEASES === "short";
/** Bun flags for the replicas (their BUN_OPTIONS), e.g. `--cpu-prof-md --cpu-prof-dir=/tmp/p` to profile them. */
const REPLICA_BUN_OPTIONS = process.env.KOBUN_BENCH_REPLICA_BUN_OPTIONS;
const LIMIT = 4;
const HANDLER_MS = 20;
/** The throughput rows' sandbox in a process of its own (default), or in this one (`SANDBOX=here`). */
const APART = process.env.SANDBOX !== "here";
const LEASES: Resource = { group: "coordination.k8s.io", version: "v1", plural: "leases", kind: "Lease", namespaced: true, statusSubresource: false };
const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const E2E_CRDS = join(root, "test/e2e/handlers/kobunflaky.crd.yaml");

function ensureE2eBinary(): void {
  // Always built (≈ 1 s): a binary left from an older checkout measured old code (and failed).
  const built = Bun.spawnSync([process.execPath, "run", join(root, "build.ts"), "--handlers", "test/e2e/handlers", "--outfile", KOBUN_E2E], { cwd: root, stdout: "inherit", stderr: "inherit" });
  if (built.exitCode !== 0) throw new Error("bench: building dist/kobun-e2e failed");
}

/**
 * Counts the ends a replica's spans file records (a line per run's start and one per end),
 * reading only what was appended since the last call: re-reading whole files every poll cost
 * this process O(N²) CPU, which the replicas needed on 2 cores. Only whole lines are counted.
 */
function endCounter(file: string): { count(): number; close(): void } {
  let offset = 0;
  let ends = 0;
  let fd: number | undefined;
  const chunk = Buffer.alloc(1 << 16);
  const count = () => {
    if (fd === undefined) {
      if (!existsSync(file)) return 0;
      fd = openSync(file, "r");
    }
    for (let n: number; (n = readSync(fd, chunk, 0, chunk.length, offset)) > 0;) {
      const whole = chunk.lastIndexOf(10, n - 1) + 1; // up to the last newline: a line being written waits
      if (whole === 0) break;
      for (let at = chunk.indexOf('"end"'); at >= 0 && at < whole; at = chunk.indexOf('"end"', at + 5)) ends++;
      offset += whole;
    }
    return ends;
  };
  return { count, close: () => fd !== undefined && closeSync(fd) };
}

/** The API server of one run: the sandbox here, or in a process of its own (its CPU then measurable). */
interface Server { url: string; kubeconfigPath: string; cpuUs?(): Promise<number>; ask?(cmd: string): Promise<any>; stats?: { requests(verb?: string): number; log: { verb: string; plural?: string }[] }; stop(): Promise<void> }

/** The requests the server received so far, by verb and resource ("patch configmaps"), as sandbox-server.ts counts them. */
async function requestCounts(s: Server): Promise<Record<string, number>> {
  if (s.ask) return (await s.ask("requests")).requests;
  const counts: Record<string, number> = {};
  for (const r of s.stats?.log ?? []) counts[`${r.verb} ${r.plural ?? "-"}`] = (counts[`${r.verb} ${r.plural ?? "-"}`] ?? 0) + 1;
  return counts;
}

/** Per object handled: the requests made between two counts (the creates included), those above 0.01. */
function perObject(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, round((v - (before[k] ?? 0)) / N)] as const).filter(([, v]) => v >= 0.01));
}

async function server(options: { shardSelectors: boolean; apart: boolean }): Promise<Server> {
  if (options.apart && options.shardSelectors) return spawnSandbox();
  return startSandbox({ shardSelectors: options.shardSelectors });
}

/** What one run measured: wall time, create time, bytes per replica (when proxied), the runs per replica, the sandbox's CPU. */
interface Run { ms: number; createMs: number; bytes: number[]; spans: Span[][]; sandboxCpuMs?: number; replicasCpuMs: number; benchCpuMs: number; requestsPerObject: Record<string, number> }

/** A process's CPU so far (user + system, ms), from /proc (clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}
const ownCpuMs = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000; };

/** Each replica's shard Leases held, read from the server. */
async function held(admin: KubeClient): Promise<number[]> {
  const counts = new Map<string, number>();
  for (const l of (await admin.list(LEASES, { namespace: "default" })).items) {
    const holder = l.metadata.labels?.["kobun.dev/shard-role"] === "shard" ? (l.spec as { holderIdentity?: string } | undefined)?.holderIdentity : undefined;
    if (holder) counts.set(holder, (counts.get(holder) ?? 0) + 1);
  }
  return [...counts.values()];
}

/** Waits until every replica holds its quota of the shards (30 s at most). */
async function settled(admin: KubeClient, replicas: number, shards: number): Promise<void> {
  const deadline = performance.now() + 30_000;
  for (let counts = await held(admin); !(counts.length === replicas && counts.reduce((a, b) => a + b, 0) === shards && Math.max(...counts) - Math.min(...counts) <= 1); counts = await held(admin)) {
    if (performance.now() > deadline) throw new Error(`bench: ${shards} shards not held at their quotas within 30 s`);
    await Bun.sleep(50);
  }
}

/** One run: `replicas` processes handle N objects. */
async function once(replicas: number, shards: number, options: { shardSelectors: boolean; proxied: boolean; apart: boolean }): Promise<Run> {
  const sandbox = await server(options);
  const admin = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const dir = mkdtempSync(join(tmpdir(), "kobun-bench-shards-"));
  const ops: Operator[] = [];
  const proxies: TcpProxy[] = [];
  let counters: ReturnType<typeof endCounter>[] = [];
  try {
    await installCrds(admin, E2E_CRDS);
    const config = join(dir, "kobun.yaml");
    writeFileSync(config, JSON.stringify({
      sharding: { replicas: "auto", shards },
      peering: { name: "bench", ...(SHORT_LEASES ? { freezeGracePeriod: "500ms", lease: { duration: "3s", renewDeadline: "2s", retryPeriod: "250ms" } } : {}) },
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
      ops.push(new Operator(`bench-r${i}`, KOBUN_E2E, ["run", "--kubeconfig", kubeconfig, "-q", "-n", "default", "--config", config], { KOBUN_E2E_SPANS: file, ...(REPLICA_BUN_OPTIONS ? { BUN_OPTIONS: REPLICA_BUN_OPTIONS } : {}) }));
    }
    await settled(admin, replicas, shards);
    await Bun.sleep(300); // the last shards taken have their streams listed
    const before = proxies.map((p) => p.bytesReceived);
    const cpuBefore = await sandbox.cpuUs?.();
    const requestsBefore = await requestCounts(sandbox);
    const replicasBefore = ops.reduce((sum, op) => sum + cpuMsOf(op.pid), 0);
    const benchBefore = ownCpuMs();
    const t0 = performance.now();
    for (let i = 0; i < N; i += 25) {
      await Promise.all(Array.from({ length: Math.min(25, N - i) }, (_, j) => admin.create(CONFIGMAPS, "default", {
        apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i + j}`, labels: { "e2e.kobun.dev/spans": "yes" } }, data: { ms: String(HANDLER_MS) },
      })));
    }
    const createMs = performance.now() - t0;
    // Read every 10 ms, not every 1 ms: the reads share this process with the creates.
    counters = files.map(endCounter);
    while (counters.reduce((sum, c) => sum + c.count(), 0) < N) {
      if (performance.now() > t0 + 120_000) throw new Error(`bench: ${N} objects not handled in time`);
      await Bun.sleep(10);
    }
    const ms = performance.now() - t0;
    const cpuAfter = await sandbox.cpuUs?.();
    const requestsPerObject = perObject(requestsBefore, await requestCounts(sandbox));
    const replicasCpuMs = ops.reduce((sum, op) => sum + cpuMsOf(op.pid), 0) - replicasBefore;
    const benchCpuMs = ownCpuMs() - benchBefore;
    return {
      replicasCpuMs, benchCpuMs, requestsPerObject,
      ms, createMs, bytes: proxies.map((p, i) => p.bytesReceived - before[i]!), spans: files.map((f, i) => spansOf(`r${i}`, f)),
      ...(cpuBefore !== undefined && cpuAfter !== undefined ? { sandboxCpuMs: (cpuAfter - cpuBefore) / 1000 } : {}),
    };
  } finally {
    for (const c of counters) c.close();
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
/** Per row, the median run's shape: steady rate, shares, each replica's rate against its ceiling. */
const shapes: Record<string, ReturnType<typeof shape>> = {};

/** The runs' shape: while all replicas are busy, how fast together; each replica's share and rate. */
function shape(run: Run): Record<string, number | number[] | Record<string, number>> {
  const done = run.spans.map((list) => list.filter((s) => s.end !== undefined && !s.aborted));
  const from = Math.max(...done.map((l) => Math.min(...l.map((s) => s.start))));
  const to = Math.min(...done.map((l) => Math.max(...l.map((s) => s.end!))));
  const inWindow = done.flat().filter((s) => s.end! >= from && s.end! <= to).length;
  const rates = done.map((l) => l.length / ((Math.max(...l.map((s) => s.end!)) - Math.min(...l.map((s) => s.start))) / 1000));
  const ceiling = (LIMIT * 1000) / HANDLER_MS;
  return {
    steady_objects_per_s: Math.round(inWindow / ((to - from) / 1000)),
    shares_pct: done.map((l) => round((l.length / N) * 100, 1)),
    replica_objects_per_s: rates.map((r) => Math.round(r)),
    replica_ceiling_pct: rates.map((r) => round((r / ceiling) * 100, 1)),
    // Where the 2 cores go, per object handled (in this process: the sandbox's share is in the bench's).
    ...(run.sandboxCpuMs !== undefined ? { sandbox_cpu_us_per_object: Math.round((run.sandboxCpuMs * 1000) / N) } : {}),
    replicas_cpu_us_per_object: Math.round((run.replicasCpuMs * 1000) / N),
    bench_cpu_us_per_object: Math.round((run.benchCpuMs * 1000) / N),
    // What the replicas (and the creates) asked of the server per object: lease renewals beside the objects' own.
    requests_per_object: run.requestsPerObject,
  };
}

/** A row: its runs, with `replicas` replicas over `shards` shards, the sandbox in its own process (apart) or in this one. */
interface Row { key: string; replicas: number; shards: number; apart: boolean; runs: Run[] }

function row(replicas: number, shards: number, apart: boolean): Row {
  return { key: `replicas_${replicas}_shards_${shards}${apart === APART ? "" : apart ? "_sandbox_apart" : "_sandbox_here"}`, replicas, shards, apart, runs: [] };
}

/** The row's median run as objects/s; its wall and create times and the median run's shape go beside. */
function summary(r: Row): number {
  wallMs[r.key] = r.runs.map((run) => Math.round(run.ms));
  createMs[r.key] = r.runs.map((run) => Math.round(run.createMs));
  const middle = [...r.runs].sort((a, b) => a.ms - b.ms)[Math.floor(r.runs.length / 2)]!;
  shapes[r.key] = shape(middle);
  return Math.round((N / middle.ms) * 1000);
}

ensureE2eBinary();
// The headline's placement of the sandbox, then the other one (printed beside it), then the sweep.
const headline = [1, 2, 3].map((replicas) => row(replicas, SHARDS, APART));
const other = [1, 2, 3].map((replicas) => row(replicas, SHARDS, !APART));
const swept = SWEEP.map((shards) => row(3, shards, APART));
// Round by round, every row once a round: a busy spell of the shared machine falls on all rows
// alike, and the two placements are compared run against run, not one after the other.
for (let run = 0; run < RUNS; run++) {
  for (const r of [...headline, ...other, ...swept]) r.runs.push(await once(r.replicas, r.shards, { shardSelectors: true, proxied: false, apart: r.apart }));
}
const perReplicas: Record<string, number> = Object.fromEntries(headline.map((r) => [`replicas_${r.replicas}_objects_per_s`, summary(r)]));
const otherRates = other.map(summary);
const sweep: Record<string, number> = Object.fromEntries(swept.map((r) => [`shards_${r.shards}_replicas_3_objects_per_s`, summary(r)]));
const serverSide = await once(3, SHARDS, { shardSelectors: true, proxied: true, apart: false });
const clientSide = await once(3, SHARDS, { shardSelectors: false, proxied: true, apart: false });
const figures = {
  objects: N, shards: SHARDS, handler_ms: HANDLER_MS, workers_limit: LIMIT, runs: RUNS, niceness: getPriority(), sandbox: APART ? "own process" : "bench process",
  ...perReplicas,
  speedup_2_vs_1: round(perReplicas.replicas_2_objects_per_s! / perReplicas.replicas_1_objects_per_s!),
  speedup_3_vs_1: round(perReplicas.replicas_3_objects_per_s! / perReplicas.replicas_1_objects_per_s!),
  // The fastest run of each row: on a busy shared machine the least disturbed one.
  ...Object.fromEntries([1, 2, 3].map((r) => [`replicas_${r}_best_objects_per_s`, Math.round((N / Math.min(...wallMs[`replicas_${r}_shards_${SHARDS}`]!)) * 1000)])),
  speedup_3_vs_1_best: round(Math.min(...wallMs[`replicas_1_shards_${SHARDS}`]!) / Math.min(...wallMs[`replicas_3_shards_${SHARDS}`]!)),
  // The same rows with the sandbox placed the other way (in this process, or in its own).
  [APART ? "sandbox_in_bench_process" : "sandbox_in_own_process"]: {
    ...Object.fromEntries(otherRates.map((rate, i) => [`replicas_${i + 1}_objects_per_s`, rate])),
    speedup_2_vs_1: round(otherRates[1]! / otherRates[0]!), speedup_3_vs_1: round(otherRates[2]! / otherRates[0]!),
  },
  ...(SWEEP.length ? { sweep } : {}),
  // The median run of each row: steady rate while all replicas are busy, shares, rates against the 200/s ceiling.
  shape: shapes,
  wall_ms: wallMs, create_ms: createMs, load_average_1m: round(loadavg()[0]!),
  bytes_per_replica_server_side: serverSide.bytes, bytes_per_replica_client_side: clientSide.bytes,
  patches_per_object: serverSide.requestsPerObject["patch configmaps"],
  bytes_ratio_client_vs_server: round(clientSide.bytes.reduce((a, b) => a + b, 0) / serverSide.bytes.reduce((a, b) => a + b, 0)),
};
report("sharding", figures);
// `nice -n -10 bun bench/sharding.ts` (the machine is shared) is kept beside the plain run.
if (!process.env.KOBUN_BENCH_NO_SAVE) saveResults(getPriority() < 0 ? "sharding_niced" : "sharding", figures);
