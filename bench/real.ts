// kobun's binary on a real kube-apiserver + etcd (test/cluster), the example operator's three
// handlers (so a finalizer), N objects created before the operator starts, one namespace each
// run; beside it in the same run: the bare-client floor (the issue's three requests per object,
// and floorSameRequests: every request and answer kobun has, its watch and Events too, over the
// protocol kobun speaks; floorSameRequestsHttp1 the same over HTTP/1.1), Kopf and
// controller-runtime (bench/peers/).
// Figures per peer: CPU per handled object, peak RSS, wall until all handled, SIGTERM → exit.
// With --memory: kobun's RSS slope from 2,000 to 20,000 objects, the peak of a full relist of
// 20,000 against the steady state, and idle RSS against a compiled hello-world.
//
//   bun bench/real.ts [--objects 2000[,8000,20000]] [--peers kobun,kobunHttp1,floor,floorSameRequests,floorSameRequestsHttp1,kopf,controllerRuntime]
//                     [--protocol http2|http1.1] [--rounds 1] [--memory] [--save-as real]
//
// --protocol: what kobun (HTTP/1.1 is its --http1) and the floors speak; floorSameRequestsHttp1
// and kobunHttp1 always speak HTTP/1.1. --rounds: the peers run that many times, interleaved (A, B, A, B), and
// each figure is the median of its rounds.
//
// Writes its figures to bench/results.json under "real", or the key --save-as names (other keys are
// kept), so that a run of rounds can stand beside the full run (e.g. --save-as real_rounds).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { KubeClient } from "../src/kube/client.ts";
import { buildBinaries, kubernetesVersion, startCluster } from "../test/cluster/cluster.ts";
import { installCrds } from "../test/e2e/harness/kube.ts";
import { median, report, root, round, saveResults } from "./common.ts";
import { controllerRuntimePeer, floorPeer, kobunPeer, kopfPeer, type Peer, type Prepared, type Target } from "./peers/index.ts";
import { measureRun, namespaceWithObjects, type RunFigures } from "./peers/measure.ts";
import { measureMemory } from "./peers/memory.ts";

const ALL = ["kobun", "kobunHttp1", "floor", "floorSameRequests", "floorSameRequestsHttp1", "kopf", "controllerRuntime"] as const;
const { values } = parseArgs({
  options: {
    objects: { type: "string", default: "2000" }, peers: { type: "string", default: ALL.join(",") }, memory: { type: "boolean", default: false },
    protocol: { type: "string", default: "http2" }, rounds: { type: "string", default: "1" }, "save-as": { type: "string", default: "real" },
  },
});
const protocol = values.protocol;
if (protocol !== "http2" && protocol !== "http1.1") throw new Error(`--protocol: http2 or http1.1, got "${protocol}"`);
// Only "real…" keys: another bench's figures (or the "commit" record) are never overwritten.
if (!/^real[\w-]*$/.test(values["save-as"])) throw new Error(`--save-as: a results key starting with "real", got "${values["save-as"]}"`);
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: a positive integer, got "${values.rounds}"`);
const counts = values.objects.split(",").map((n) => {
  const count = Number(n);
  if (!Number.isInteger(count) || count < 1) throw new Error(`--objects: a comma-separated list of positive integers, got "${values.objects}"`);
  return count;
});
const wanted = values.peers.split(",");
for (const name of wanted) if (!(ALL as readonly string[]).includes(name)) throw new Error(`--peers: ${name} is not one of ${ALL.join(", ")}`);

buildBinaries(); // a no-op once test/cluster/build.sh has built them (cold: minutes)
const work = mkdtempSync(join(tmpdir(), "kobun-bench-real-"));
const cluster = await startCluster({ timeoutMs: 120_000 });
const client = await KubeClient.connect({ kubeconfig: cluster.kubeconfigPath, retries: 2 });
try {
  const target: Target = { kubeconfigPath: cluster.kubeconfigPath, url: cluster.url, caPath: join(cluster.dir, "ca.pem"), tokenPath: join(cluster.dir, "token") };
  writeFileSync(target.caPath, cluster.caPem);
  writeFileSync(target.tokenPath, cluster.token, { mode: 0o600 });
  await installCrds(client, join(root, "handlers/kobunexample.crd.yaml"));

  const prepared: Prepared[] = [];
  for (const name of wanted) {
    if (name === "kobun") prepared.push(kobunPeer(work, protocol));
    if (name === "kobunHttp1") prepared.push(kobunPeer(work, "http1.1", name));
    if (name === "floor" || name === "floorSameRequests") prepared.push(await floorPeer(work, work, name, protocol));
    if (name === "floorSameRequestsHttp1") prepared.push(await floorPeer(work, work, name, "http1.1"));
    if (name === "kopf") prepared.push(kopfPeer(work));
    if (name === "controllerRuntime") prepared.push(controllerRuntimePeer(work));
  }
  const unavailable: Record<string, string> = {};
  const peers: Peer[] = [];
  for (const p of prepared) {
    if ("unavailable" in p) {
      unavailable[p.name] = p.unavailable;
      console.error(`bench: ${p.name} left out: ${p.unavailable}`);
    } else peers.push(p);
  }

  const all: Record<string, Record<number, RunFigures[]>> = {};
  for (const count of counts) {
    for (let pass = 0; pass < rounds; pass++) {
      for (const peer of peers) {
        const namespace = `real-${peer.name.toLowerCase()}-${count}${rounds > 1 ? `-${pass}` : ""}`;
        const fromVersion = await namespaceWithObjectsLogged(namespace, count);
        const figures = await measureRun(peer, target, client, namespace, count, fromVersion);
        ((all[peer.name] ??= {})[count] ??= []).push(figures);
        report("real-run", { peer: peer.name, round: pass, ...rounded(figures) });
      }
    }
  }
  const runs = medians(all);

  const figures: Record<string, unknown> = { kubernetes: kubernetesVersion, protocol, rounds, runs: roundAll(runs), unavailable, ratios: ratios(runs, counts) };
  if (values.memory) figures.memory = await measureMemory(peers.find((p) => p.name === "kobun") ?? kobunPeer(work, protocol), target, client, work);
  report(values["save-as"], figures);
  saveResults(values["save-as"], figures);
} finally {
  client.close();
  await cluster.stop();
  rmSync(work, { recursive: true, force: true });
}

async function namespaceWithObjectsLogged(namespace: string, count: number): Promise<string> {
  const t = performance.now();
  const version = await namespaceWithObjects(client, namespace, count);
  console.error(`bench: ${count} objects in ${namespace} in ${Math.round(performance.now() - t)} ms`);
  return version;
}

/** Each figure's median over the rounds (a peer's rounds are its runs at one N). */
function medians(all: Record<string, Record<number, RunFigures[]>>): Record<string, Record<number, RunFigures>> {
  const of = (list: RunFigures[], key: keyof RunFigures) => {
    const values = list.map((f) => f[key]).filter((v): v is number => v !== undefined);
    return values.length ? median(values) : undefined;
  };
  return Object.fromEntries(Object.entries(all).map(([peer, byCount]) => [peer, Object.fromEntries(Object.entries(byCount).map(([n, list]) => [n, {
    objects: Number(n), cpuMsPerObject: of(list, "cpuMsPerObject")!, peakRssMiB: of(list, "peakRssMiB")!, settledRssMiB: of(list, "settledRssMiB"),
    wallMs: of(list, "wallMs")!, sigtermToExitMs: of(list, "sigtermToExitMs")!,
    ...(list.some((f) => f.killedAfterSigterm) ? { killedAfterSigterm: true } : {}),
  }]))]));
}

function rounded(f: RunFigures): Record<string, number | boolean | undefined> {
  return {
    objects: f.objects, cpuMsPerObject: round(f.cpuMsPerObject, 3), peakRssMiB: round(f.peakRssMiB, 1),
    settledRssMiB: f.settledRssMiB === undefined ? undefined : round(f.settledRssMiB, 1),
    wallMs: Math.round(f.wallMs), sigtermToExitMs: f.sigtermToExitMs === undefined ? undefined : round(f.sigtermToExitMs, 1),
    ...(f.killedAfterSigterm ? { killedAfterSigterm: true } : {}),
  };
}

function roundAll(runs: Record<string, Record<number, RunFigures>>): Record<string, Record<number, Record<string, number | boolean | undefined>>> {
  return Object.fromEntries(Object.entries(runs).map(([peer, byCount]) =>
    [peer, Object.fromEntries(Object.entries(byCount).map(([n, f]) => [n, rounded(f)]))]));
}

/** kobun's figures over each baseline's, per N (below 1 is better for kobun). */
function ratios(runs: Record<string, Record<number, RunFigures>>, ns: number[]): Record<number, Record<string, Record<string, number>>> {
  const out: Record<number, Record<string, Record<string, number>>> = {};
  for (const n of ns) {
    const kobun = runs.kobun?.[n];
    if (!kobun) continue;
    for (const peer of ["kobunHttp1", "floor", "floorSameRequests", "floorSameRequestsHttp1", "kopf", "controllerRuntime"]) {
      const other = runs[peer]?.[n];
      if (!other) continue;
      const r: Record<string, number> = {
        cpuPerObject: round(kobun.cpuMsPerObject / other.cpuMsPerObject), peakRss: round(kobun.peakRssMiB / other.peakRssMiB), wall: round(kobun.wallMs / other.wallMs),
      };
      // A peer killed after the bound has no exit time to compare with (the bound is a lower limit of it).
      if (!other.killedAfterSigterm && !kobun.killedAfterSigterm) r.sigtermToExit = round(kobun.sigtermToExitMs / other.sigtermToExitMs);
      (out[n] ??= {})[`kobunOver${peer[0]!.toUpperCase()}${peer.slice(1)}`] = r;
    }
  }
  return out;
}
