// on.reconcile against controller-runtime on a real kube-apiserver + etcd (test/cluster), side by
// side in one run: BenchParents (a CRD, bench/peers/reconcile/parents.crd.yaml) each owning a
// ConfigMap, a headless Service and a Deployment written with server-side apply, reconciled to
// done (status ready, observedGeneration). kobun: bench/peers/reconcile/handlers/parents.ts
// (`on.reconcile` with `owns`); controller-runtime: bench/peers/controller-runtime/reconcile
// (For + Owns + SSA, built once into the cache like bench/real.ts's peer).
//
// Per peer, in this order (peers interleaved at each step):
// - one parent, to idle: the baseline RSS that memory per cached object is measured from;
// - PARENTS parents: CPU per parent (until the process went quiet after the burst, the echoes of
//   its own writes included), peak RSS, wall from spawn until every status is written, API
//   requests per parent (kube-apiserver's audit log, by user agent: bench/peers/audit.ts);
// - LARGE parents: the same, then CHANGES spec changes with all LARGE cached (wall, CPU).
// Memory per cached object at N parents: (settled RSS at N − settled RSS at one parent) / (4 (N − 1)),
// the 4 being the parent and its three children, all of which both operators cache; and the slope
// between the two sizes, (settled at LARGE − settled at PARENTS) / (4 (LARGE − PARENTS)).
//
//   bun bench/reconcile.ts        (or `bun bench/run.ts reconcile`)
//
// Sizes from the environment, for a quick run at small N:
//   KOBUN_BENCH_RECONCILE_PARENTS (2000), KOBUN_BENCH_RECONCILE_LARGE (20000; 0 leaves the large
//   size and the changes out), KOBUN_BENCH_RECONCILE_CHANGES (1000),
//   KOBUN_BENCH_RECONCILE_PEERS (kobun,controllerRuntime; controllerRuntimeJson is controller-runtime
//   speaking JSON for the built-in kinds too, as kobun does, where it would ask for protobuf).
// Writes bench/results.json's "reconcile" key (KOBUN_BENCH_RECONCILE_SAVE_AS: another "reconcile…" key).
// KOBUN_BENCH_RECONCILE_KEEP_LOGS=DIR copies the API server's log and audit log there at the end, and each
// operator's stderr as it stops.

import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { KubeClient } from "../src/kube/client.ts";
import { buildBinaries, kubernetesVersion, startCluster } from "../test/cluster/cluster.ts";
import { installCrds } from "../test/e2e/harness/kube.ts";
import { report, round, saveResults } from "./common.ts";
import { auditArgs, BENCH_USER_AGENT, type RequestCounts } from "./peers/audit.ts";
import { bareEnv, CONTROLLER_RUNTIME_VERSION, goOperator, kobunBenchBinary, kobunPeer, type Target } from "./peers/index.ts";
import { burst, namespaceWithParents, specChanges, type BurstFigures, type ChangeFigures, type ReconcilePeer } from "./peers/reconcile/runs.ts";

const size = (name: string, fallback: number, min: number): number => {
  const raw = process.env[name];
  const value = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name}: an integer ≥ ${min}, got "${raw}"`);
  return value;
};
const PARENTS = size("KOBUN_BENCH_RECONCILE_PARENTS", 2000, 2);
const LARGE = size("KOBUN_BENCH_RECONCILE_LARGE", 20000, 0);
const CHANGES = Math.min(size("KOBUN_BENCH_RECONCILE_CHANGES", 1000, 1), LARGE);
const saveAs = process.env.KOBUN_BENCH_RECONCILE_SAVE_AS || "reconcile";
if (!/^reconcile[\w-]*$/.test(saveAs)) throw new Error(`KOBUN_BENCH_RECONCILE_SAVE_AS: a key starting with "reconcile", got "${saveAs}"`);
if (LARGE !== 0 && LARGE <= PARENTS) throw new Error(`KOBUN_BENCH_RECONCILE_LARGE (${LARGE}) must be 0 or above KOBUN_BENCH_RECONCILE_PARENTS (${PARENTS})`);
const ALL = ["kobun", "controllerRuntime", "controllerRuntimeJson"] as const;
const wanted = (process.env.KOBUN_BENCH_RECONCILE_PEERS || "kobun,controllerRuntime").split(",");
for (const name of wanted) if (!(ALL as readonly string[]).includes(name)) throw new Error(`KOBUN_BENCH_RECONCILE_PEERS: ${name} is not one of ${ALL.join(", ")}`);

buildBinaries(); // a no-op once test/cluster/build.sh has built them
const work = mkdtempSync(join(tmpdir(), "kobun-bench-reconcile-"));
const audit = auditArgs(work);
const cluster = await startCluster({ timeoutMs: 120_000, controllerManager: false, apiserverArgs: audit.args });
const client = await KubeClient.connect({ kubeconfig: cluster.kubeconfigPath, retries: 2, userAgent: BENCH_USER_AGENT });
try {
  const target: Target = { kubeconfigPath: cluster.kubeconfigPath, url: cluster.url, caPath: join(cluster.dir, "ca.pem"), tokenPath: join(cluster.dir, "token") };
  writeFileSync(target.caPath, cluster.caPem);
  writeFileSync(target.tokenPath, cluster.token, { mode: 0o600 });
  await installCrds(client, join(import.meta.dir, "peers/reconcile/parents.crd.yaml"));

  const peers: ReconcilePeer[] = [];
  const unavailable: Record<string, string> = {};
  if (wanted.includes("kobun")) {
    const kobun = kobunPeer(work, "http2", "kobun", kobunBenchBinary("bench/peers/reconcile/handlers", "dist/kobun-bench-reconcile"));
    peers.push({ name: "kobun", command: kobun.command, env: kobun.env });
  }
  for (const name of ["controllerRuntime", "controllerRuntimeJson"] as const) {
    if (!wanted.includes(name)) continue;
    const go = goOperator("reconcile", ["main.go"]);
    const json = name === "controllerRuntimeJson" ? ["--json"] : [];
    if (go.unavailable) unavailable[name] = go.unavailable;
    else peers.push({ name, env: () => bareEnv(work), command: (t, ns) => [go.path, "--kubeconfig", t.kubeconfigPath, "--namespace", ns, ...json] });
  }
  for (const [name, why] of Object.entries(unavailable)) console.error(`bench: ${name} left out: ${why}`);

  const runs: Record<string, { baseline?: BurstFigures; small?: BurstFigures; large?: BurstFigures; changes?: ChangeFigures }> = {};
  const step = async (label: "baseline" | "small" | "large", count: number) => {
    for (const peer of peers) {
      const namespace = `reconcile-${peer.name.toLowerCase()}-${count}`;
      const t = performance.now();
      const fromVersion = await namespaceWithParents(client, namespace, count);
      console.error(`bench: ${count} parents in ${namespace} in ${Math.round(performance.now() - t)} ms`);
      const running = await burst(peer, target, client, namespace, count, fromVersion, audit.logPath);
      try {
        (runs[peer.name] ??= {})[label] = running.figures;
        report("reconcile-run", { peer: peer.name, size: label, ...roundBurst(running.figures) });
        if (label === "large") {
          const changes = await specChanges(client, running, namespace, CHANGES, audit.logPath);
          runs[peer.name]!.changes = changes;
          report("reconcile-changes", { peer: peer.name, ...roundChanges(changes) });
        }
      } finally {
        await running.stop();
      }
    }
  };
  await step("baseline", 1);
  await step("small", PARENTS);
  if (LARGE) await step("large", LARGE);

  const figures: Record<string, unknown> = {
    kubernetes: kubernetesVersion, controllerRuntime: CONTROLLER_RUNTIME_VERSION, parents: PARENTS, large: LARGE, changes: CHANGES,
    peers: Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, summary(r)])), unavailable,
  };
  const k = runs.kobun && summary(runs.kobun);
  for (const other of ["controllerRuntime", "controllerRuntimeJson"] as const) {
    const c = runs[other] && summary(runs[other]);
    if (!k || !c) continue;
    figures[`kobunOver${other[0]!.toUpperCase()}${other.slice(1)}`] = Object.fromEntries(Object.keys(k)
      .filter((key) => typeof k[key] === "number" && typeof c[key] === "number" && c[key] !== 0)
      .map((key) => [key, round((k[key] as number) / (c[key] as number))]));
  }
  report(saveAs, figures);
  saveResults(saveAs, figures);
} finally {
  client.close();
  const keep = process.env.KOBUN_BENCH_RECONCILE_KEEP_LOGS;
  if (keep) for (const from of [join(cluster.dir, "kube-apiserver.log"), audit.logPath]) cpSync(from, join(keep, basename(from)));
  await cluster.stop();
  rmSync(work, { recursive: true, force: true });
}

/** The figures of one peer, flat: the table's columns (below 1 in the ratios is better for kobun). */
function summary(r: { baseline?: BurstFigures; small?: BurstFigures; large?: BurstFigures; changes?: ChangeFigures }): Record<string, number | Record<string, number> | undefined> {
  const perCached = (at?: BurstFigures) => (at && r.baseline ? round(((at.settledRssMiB - r.baseline.settledRssMiB) * 1024) / (4 * (at.parents - 1)), 3) : undefined);
  const s = r.small;
  return {
    cpuMsPerParent: s && round(s.cpuMsPerParent, 3), peakRssMiB: s && round(s.peakRssMiB, 1), wallMs: s && Math.round(s.wallMs),
    requestsPerParent: s && round(s.requests.total / s.parents, 2), settledRssMiB: s && round(s.settledRssMiB, 1),
    kibPerCachedObjectSmall: perCached(s), kibPerCachedObjectLarge: perCached(r.large),
    kibPerCachedObjectSlope: s && r.large ? round(((r.large.settledRssMiB - s.settledRssMiB) * 1024) / (4 * (r.large.parents - s.parents)), 3) : undefined,
    largeCpuMsPerParent: r.large && round(r.large.cpuMsPerParent, 3), largePeakRssMiB: r.large && round(r.large.peakRssMiB, 1),
    largeWallMs: r.large && Math.round(r.large.wallMs), largeRequestsPerParent: r.large && round(r.large.requests.total / r.large.parents, 2),
    changesWallMs: r.changes && Math.round(r.changes.wallMs), changesCpuMs: r.changes && Math.round(r.changes.cpuMs),
    changesRequestsPerChange: r.changes && round(r.changes.requests.total / r.changes.changes, 2),
    idleRssMiB: r.baseline && round(r.baseline.settledRssMiB, 1),
    requestsPerParentByKind: s && perParent(s.requests, s.parents),
  };
}

function perParent(requests: RequestCounts, parents: number): Record<string, number> {
  return Object.fromEntries(Object.entries(requests.byKind).filter(([, n]) => n >= parents / 10).map(([kind, n]) => [kind, round(n / parents, 2)]));
}

function roundBurst(f: BurstFigures): Record<string, unknown> {
  return {
    parents: f.parents, wallMs: Math.round(f.wallMs), cpuMsPerParent: round(f.cpuMsPerParent, 3), peakRssMiB: round(f.peakRssMiB, 1),
    settledRssMiB: round(f.settledRssMiB, 1), settledAnonMiB: round(f.settledAnonMiB, 1), requests: f.requests.total,
    requestsPerParent: round(f.requests.total / f.parents, 2), userAgents: f.requests.userAgents, byKind: f.requests.byKind,
  };
}

function roundChanges(f: ChangeFigures): Record<string, unknown> {
  return { changes: f.changes, wallMs: Math.round(f.wallMs), cpuMs: Math.round(f.cpuMs), cpuMsPerChange: round(f.cpuMsPerChange, 3), requests: f.requests.total, byKind: f.requests.byKind };
}
