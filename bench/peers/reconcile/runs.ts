// One measured run of a reconcile peer (bench/reconcile.ts) on the real API server: `count`
// BenchParents exist before it starts; the bench watches them and notes when every one has
// `status.ready` and `status.observedGeneration` at its generation (the reconcile applies the
// three children before it writes the status, so all children exist by then; checked after).
// CPU and memory are the process's own, from /proc (measure.ts); requests from the audit log.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KubeClient } from "../../../src/kube/client.ts";
import type { Resource } from "../../../src/kube/types.ts";
import { rawWatch } from "../../../test/e2e/harness/kube.ts";
import { auditOffset, requestsSince, type RequestCounts } from "../audit.ts";
import type { Target } from "../index.ts";
import { cpuMs, memoryKiB, namespaceWithObjects, settledRss } from "../measure.ts";

export const PARENTS: Resource = {
  group: "bench.kobun.dev", version: "v1", plural: "benchparents", kind: "BenchParent", namespaced: true, statusSubresource: true,
};
const CHILDREN: Resource[] = [
  { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false },
  { group: "", version: "v1", plural: "services", kind: "Service", namespaced: true, statusSubresource: true },
  { group: "apps", version: "v1", plural: "deployments", kind: "Deployment", namespaced: true, statusSubresource: true },
];

export interface ReconcilePeer {
  name: "kobun" | "controllerRuntime" | "controllerRuntimeJson";
  command(target: Target, namespace: string): string[];
  env(target: Target): Record<string, string>;
}

/** A namespace holding `count` fresh BenchParents, p-0 … p-<count − 1>; the list's resourceVersion after. */
export function namespaceWithParents(client: KubeClient, namespace: string, count: number): Promise<string> {
  return namespaceWithObjects(client, namespace, count, PARENTS, (i) => ({
    apiVersion: "bench.kobun.dev/v1", kind: "BenchParent", metadata: { name: `p-${i}` }, spec: { replicas: 1, image: "registry.invalid/app:1", message: `hello p-${i}` },
  }));
}

/**
 * Resolves when every parent named in `wanted` shows status ready at (at least) the generation
 * given. The API server closes a watch whose reader falls behind (this process, on a busy
 * machine): it is then resumed from the last version seen (as measure.ts's allHandled does).
 */
async function allObserved(client: KubeClient, namespace: string, wanted: Map<string, number>, fromVersion: string, timeoutMs: number): Promise<void> {
  const waiting = new Map(wanted);
  const deadline = performance.now() + timeoutMs;
  let version = fromVersion;
  while (performance.now() < deadline) {
    const { ended, events } = await rawWatch(client, `/apis/${PARENTS.group}/${PARENTS.version}/namespaces/${namespace}/${PARENTS.plural}`,
      { resourceVersion: version, allowWatchBookmarks: "true" }, {
        timeoutMs: deadline - performance.now(),
        until: (event) => {
          if (event.type === "ERROR") throw new Error(`bench: watch ERROR in ${namespace}: ${event.object?.message}`);
          const o = event.object;
          version = o?.metadata?.resourceVersion ?? version;
          const generation = waiting.get(o?.metadata?.name);
          if (generation !== undefined && o.status?.ready === true && o.status?.observedGeneration >= generation) waiting.delete(o.metadata.name);
          return waiting.size === 0;
        },
      });
    if (ended === "until") return;
    if (ended === "timeout") break;
    events.length = 0;
  }
  throw new Error(`bench: ${wanted.size - waiting.size} of ${wanted.size} parents reconciled in ${namespace} within ${timeoutMs} ms`);
}

/** Fails unless the namespace holds `count` of each child kind, each with a controller reference to a BenchParent. */
async function checkChildren(client: KubeClient, namespace: string, count: number): Promise<void> {
  for (const kind of CHILDREN) {
    const { items } = await client.listAll(kind, { namespace });
    const owned = items.filter((c) => c.metadata.ownerReferences?.some((r) => r.controller && r.kind === "BenchParent"));
    if (owned.length !== count) throw new Error(`bench: ${owned.length} ${kind.plural} owned by a BenchParent in ${namespace}, expected ${count}`);
  }
}

export interface BurstFigures {
  parents: number;
  /** Spawn → every parent's status written (children exist). */
  wallMs: number;
  /** The process's CPU until it went quiet after the burst (the echoes of its own writes included), per parent. */
  cpuMsPerParent: number;
  peakRssMiB: number;
  /** RSS once quiet after the burst (measure.ts's settledRss). */
  settledRssMiB: number;
  settledAnonMiB: number;
  requests: RequestCounts;
}

export interface ChangeFigures { changes: number; wallMs: number; cpuMs: number; cpuMsPerChange: number; requests: RequestCounts }

/** A running peer, after its burst; `stop` ends it. */
export interface Running { figures: BurstFigures; pid: number; stop(): Promise<void> }

/** Starts `peer` on a namespace of `count` parents; resolves once all are reconciled and the process went quiet. */
export async function burst(
  peer: ReconcilePeer, target: Target, client: KubeClient, namespace: string, count: number, fromVersion: string,
  audit: string, { timeoutMs = 1_200_000, settleMs = 60_000 } = {},
): Promise<Running> {
  const wanted = new Map(Array.from({ length: count }, (_, i) => [`p-${i}`, 1]));
  const watching = allObserved(client, namespace, wanted, fromVersion, timeoutMs);
  const from = auditOffset(audit);
  const started = performance.now();
  const child = Bun.spawn(peer.command(target, namespace), { env: peer.env(target), stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const stderr = new Response(child.stderr).text();
  const failed = child.exited.then(async (code) => {
    throw new Error(`bench: ${peer.name} exited (${code}) before its parents were reconciled: ${(await stderr).slice(-2000)}`);
  });
  failed.catch(() => {}); // rejects on every exit; only the race below cares
  const stop = async () => {
    child.kill("SIGTERM");
    const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(30_000).then(() => false)]);
    if (!exited) child.kill("SIGKILL");
    await child.exited;
    const keep = process.env.KOBUN_BENCH_RECONCILE_KEEP_LOGS; // its warnings and errors, to read after the run
    if (keep) writeFileSync(join(keep, `${namespace}.stderr`), await stderr);
  };
  try {
    await Promise.race([watching, failed]);
    const wallMs = performance.now() - started;
    const peakRssMiB = memoryKiB(child.pid, "VmHWM") / 1024;
    const settled = await settledRss(child.pid, { maxMs: settleMs });
    const cpu = cpuMs(child.pid);
    await checkChildren(client, namespace, count);
    const requests = await requestsSince(audit, from);
    return {
      pid: child.pid, stop,
      figures: { parents: count, wallMs, cpuMsPerParent: cpu / count, peakRssMiB, settledRssMiB: settled.rssMiB, settledAnonMiB: settled.anonMiB, requests },
    };
  } catch (error) {
    child.kill("SIGKILL");
    await child.exited;
    throw error;
  }
}

/**
 * `changes` spec changes (a new message: a new generation) on the first parents of a namespace a
 * running peer has reconciled; wall from the first change sent until every changed parent's
 * status observes its new generation, CPU until the peer went quiet again.
 */
export async function specChanges(client: KubeClient, running: Running, namespace: string, changes: number, audit: string): Promise<ChangeFigures> {
  const fromVersion = (await client.list(PARENTS, { namespace, limit: 1 })).metadata.resourceVersion!;
  const wanted = new Map(Array.from({ length: changes }, (_, i) => [`p-${i}`, 2]));
  const watching = allObserved(client, namespace, wanted, fromVersion, 600_000);
  const from = auditOffset(audit);
  const cpuBefore = cpuMs(running.pid);
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 50 }, async () => {
    while (next < changes) {
      const name = `p-${next++}`;
      await client.patch(PARENTS, namespace, name, { spec: { message: `changed ${name}` } }, { type: "merge" });
    }
  }));
  await watching;
  const wallMs = performance.now() - started;
  await settledRss(running.pid, { maxMs: 30_000 });
  const cpu = cpuMs(running.pid) - cpuBefore;
  return { changes, wallMs, cpuMs: cpu, cpuMsPerChange: cpu / changes, requests: await requestsSince(audit, from) };
}
