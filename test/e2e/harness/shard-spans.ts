// Sharded replicas as processes (scaling.e2e.ts, scaling-kill.e2e.ts): the runs each replica's
// spans handler (handlers/spans.ts) recorded, the shards each replica gave up (from its log),
// the shard Leases' holders, and objects made for that handler.

import { existsSync, readFileSync } from "node:fs";
import type { KubeObject, Resource } from "../../../src/kube/types.ts";
import type { Target } from "./target.ts";

export const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const LEASES: Resource = { group: "coordination.k8s.io", version: "v1", plural: "leases", kind: "Lease", namespaced: true, statusSubresource: false };
/**
 * The shard Leases' timings: renewals every 250 ms with 2.75 s to spare before renewDeadline,
 * which a replica process keeps on a loaded 2-core machine (3 s / 2 s in one shared
 * event loop did not). Handover latency bounds derive from `duration`.
 */
export const SHARD_LEASE = { duration: "4s", renewDeadline: "3s", retryPeriod: "250ms" };
export const SHARD_LEASE_MS = { duration: 4000, renewDeadline: 3000 };
/**
 * How late a replica's timers may run before another replica may take a shard it still thinks
 * it holds (duration − renewDeadline). A process stalled longer than that cannot know (no lease
 * can tell it), so a handler in flight across the stall may still be inside when the new owner
 * starts: the limit every lease has (README "Scaling out").
 */
export const LEASE_MARGIN_MS = SHARD_LEASE_MS.duration - SHARD_LEASE_MS.renewDeadline;

/** Its replica stalled past the lease margin during the run: its handler's `ms` timer fired that much late. */
export const stalledPastLease = (s: Span, ms: number) => s.end !== undefined && s.end - s.start > ms + LEASE_MARGIN_MS;
/** Epoch ms, comparable across processes (spans.ts writes the same clock). */
export const now = () => performance.timeOrigin + performance.now();

export interface Span { replica: string; uid: string; start: number; end?: number; aborted?: boolean }

/** The runs a replica recorded: starts and ends paired per object, in order. */
export function spansOf(replica: string, file: string): Span[] {
  if (!existsSync(file)) return [];
  const open = new Map<string, Span>();
  const out: Span[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line) continue;
    const r = JSON.parse(line) as { uid: string; start?: number; end?: number; aborted?: boolean };
    if (r.start !== undefined) {
      const span: Span = { replica, uid: r.uid, start: r.start };
      open.set(r.uid, span);
      out.push(span);
    } else {
      const span = open.get(r.uid);
      if (span) Object.assign(span, { end: r.end, aborted: r.aborted });
      open.delete(r.uid);
    }
  }
  return out;
}

/** Runs whose handler ended without its signal aborted. */
export const completed = (spans: Span[]) => spans.filter((s) => s.end !== undefined && !s.aborted);

/** When a replica gave a shard up (lost it or released it), from its plain log lines. */
export interface GiveUp { replica: string; shard: number; at: number }

export function giveUpsOf(replica: string, lines: readonly string[]): GiveUp[] {
  const out: GiveUp[] = [];
  for (const line of lines) {
    const m = /^(\S+) +\S+ +(?:lost a shard|released a shard|handing over a shard)\b.* shard=(\d+)/.exec(line);
    if (m) out.push({ replica, shard: Number(m[2]), at: Date.parse(m[1]!) });
  }
  return out;
}

export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await Bun.sleep(50);
  }
}

/** How many shard Leases each replica holds. */
export async function holders(t: Target, namespace: string): Promise<Map<string, number>> {
  const leases = await t.client.list(LEASES, { namespace, labelSelector: "kobun.dev/shard-role=shard" });
  const held = new Map<string, number>();
  for (const lease of leases.items) {
    const holder = (lease.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
    if (holder) held.set(holder, (held.get(holder) ?? 0) + 1);
  }
  return held;
}
export const counts = (held: Map<string, number>) => [...held.values()].sort((a, b) => a - b).join();

/** Creates `count` ConfigMaps for the spans handler (waiting `ms` each), 25 at a time; returns them with their creation time. */
export async function createMany(t: Target, namespace: string, prefix: string, count: number, ms: number): Promise<{ uid: string; at: number }[]> {
  const made: { uid: string; at: number }[] = [];
  for (let i = 0; i < count; i += 25) {
    const batch = Array.from({ length: Math.min(25, count - i) }, (_, j) => t.client.create(CONFIGMAPS, namespace, {
      apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${prefix}-${i + j}`, labels: { "e2e.kobun.dev/spans": "yes" } }, data: { ms: String(ms) },
    }).then((o: KubeObject) => ({ uid: o.metadata.uid!, at: now() })));
    made.push(...(await Promise.all(batch)));
  }
  return made;
}

/**
 * Objects that were inside two replicas' handlers at once; `endOf` gives a run without a recorded
 * end its end (a kill); `excused(first)`: an overlap the earlier of the two runs is excused for.
 */
export function overlaps(spans: Span[], endOf: (s: Span) => number = (s) => s.end ?? Infinity, excused: (first: Span) => boolean = () => false): string[] {
  const found: string[] = [];
  for (const [uid, runs] of Map.groupBy(spans, (s) => s.uid)) for (const a of runs) for (const b of runs) {
    if (a !== b && a.replica < b.replica && a.start < endOf(b) && b.start < endOf(a) && !excused(a.start <= b.start ? a : b)) found.push(`${uid}: ${a.replica} and ${b.replica}`);
  }
  return found;
}
