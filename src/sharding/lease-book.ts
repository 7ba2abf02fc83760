// LeaseBook: what this replica knows of its group's Leases (shards and members), kept by a
// label-selected WATCH and by its own writes, with a fresh LIST every resync period as the
// safety net for an event a stream might have missed. Each record remembers when we saw it
// change, by our clock: that, not the Lease's renewTime, is how liveness is judged (assign.ts).

import { leaseResource, newer, specOf } from "../kube/index.ts";
import type { KubeObject } from "../kube/index.ts";
import { sleep } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import type { WatchClient } from "../watching/index.ts";
import { Watcher } from "../watching/index.ts";
import type { ForeignLeaseView, MemberView, ShardLeaseView } from "./assign.ts";
import { fnv1a64 } from "./hash.ts";

export const GROUP_LABEL = "kobun.dev/shard-group";
export const ROLE_LABEL = "kobun.dev/shard-role";
/** The shard count of the replica that wrote a Lease: replicas with different counts must not hold shards at once. */
export const SHARDS_ANNOTATION = "kobun.dev/shards";

/** The count a Lease announces, or undefined when it says none (written by an older kobun). */
function announcedShards(lease: KubeObject): number | undefined {
  const value = Number(lease.metadata.annotations?.[SHARDS_ANNOTATION]);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/** A DNS-1123 name for a replica id (`user@host/stamp/rnd`, a pod name), unique by its hash. */
export function memberLeaseName(group: string, id: string): string {
  const slug = id.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40);
  return `${group}-member-${slug ? `${slug}-` : ""}${fnv1a64(id).toString(36)}`;
}

interface Seen { object: KubeObject; key: string; at: number }

export interface LeaseBookOptions {
  client: WatchClient;
  namespace: string;
  group: string;
  durationMs: number;
  retryPeriodMs: number;
  /** A fresh LIST this often, besides the watch. */
  resyncMs: number;
  logger: Logger;
  /** Something changed (a watch event or a relist). */
  changed(): void;
}

export class LeaseBook {
  private readonly seen = new Map<string, Seen>();
  private readonly startedAt = Date.now();
  private readonly listed = Promise.withResolvers<void>();

  constructor(private readonly options: LeaseBookOptions) {}

  /**
   * Resolves once the group's Leases were listed (or `signal` aborts): a decision before that cannot
   * see a shard Lease written under another count.
   */
  async primed(signal: AbortSignal): Promise<void> {
    const aborted = Promise.withResolvers<void>();
    const onAbort = () => aborted.resolve();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      await Promise.race([this.listed.promise, aborted.promise]);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  get(name: string): KubeObject | undefined {
    return this.seen.get(name)?.object;
  }

  delete(name: string): void {
    this.seen.delete(name);
  }

  /** Records a Lease (from the watch or our own write), unless we know a newer one. */
  observe(lease: KubeObject): void {
    const name = lease.metadata.name!;
    const current = this.seen.get(name);
    if (current && !newer(lease.metadata.resourceVersion, current.object.metadata.resourceVersion)) return;
    const spec = specOf(lease);
    const key = `${spec.holderIdentity ?? ""}|${spec.renewTime ?? ""}|${spec.leaseDurationSeconds ?? ""}`;
    this.seen.set(name, { object: lease, key, at: current?.key === key ? current.at : Date.now() });
  }

  /** One view per shard, by index (a Lease not seen yet counts as free since we started). */
  leaseViews(shards: number, nameOf: (index: number) => string): ShardLeaseView[] {
    return Array.from({ length: shards }, (_, index) => {
      const seen = this.seen.get(nameOf(index));
      if (!seen) return { index, observedAt: this.startedAt, durationMs: this.options.durationMs };
      const spec = specOf(seen.object);
      const holder = spec.holderIdentity ? { holder: spec.holderIdentity } : {};
      return { index, ...holder, observedAt: seen.at, durationMs: (spec.leaseDurationSeconds ?? 0) * 1000 };
    });
  }

  memberViews(): MemberView[] {
    const out: MemberView[] = [];
    for (const seen of this.seen.values()) {
      if (seen.object.metadata.labels?.[ROLE_LABEL] !== "member") continue;
      const spec = specOf(seen.object);
      const shards = announcedShards(seen.object);
      if (!spec.holderIdentity) continue;
      const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
      out.push({ id: spec.holderIdentity, observedAt: seen.at, durationMs, ...(shards ? { shards } : {}) });
    }
    return out;
  }

  /**
   * The group's shard Leases held under another shard count than `shards` (any index: theirs may
   * reach past ours).
   */
  foreignViews(shards: number): ForeignLeaseView[] {
    const out: ForeignLeaseView[] = [];
    for (const seen of this.seen.values()) {
      const announced = announcedShards(seen.object);
      const { labels, name } = seen.object.metadata;
      if (labels?.[ROLE_LABEL] !== "shard" || announced === undefined || announced === shards) continue;
      const spec = specOf(seen.object);
      if (!spec.holderIdentity) continue;
      const index = Number(name!.slice(name!.lastIndexOf("-") + 1));
      const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
      out.push({ index, holder: spec.holderIdentity, observedAt: seen.at, durationMs, shards: announced });
    }
    return out;
  }

  /** Follows the group's Leases until `signal` aborts. */
  async watch(signal: AbortSignal): Promise<void> {
    const { client, namespace, group, logger } = this.options;
    while (!signal.aborted) {
      const labelSelector = `${GROUP_LABEL}=${group}`;
      const watcher = new Watcher(client, leaseResource, { namespace, labelSelector, logger });
      const period = AbortSignal.any([signal, AbortSignal.timeout(this.options.resyncMs)]);
      try {
        const listed = new Set<string>();
        for await (const event of watcher.events(period)) {
          if (event.type === "relist-start") listed.clear();
          else if (event.type === "relist-done") {
            this.forgetUnlisted(listed, event.resourceVersion);
            this.listed.resolve();
          }
          else if (event.type === "deleted") this.seen.delete(event.object.metadata.name!);
          else {
            if (event.type === "listed") listed.add(event.object.metadata.name!);
            this.observe(event.object);
          }
          this.options.changed();
        }
      } catch (error) {
        if (period.aborted) continue;
        const message = error instanceof Error ? error.message : String(error);
        logger.debug("watching the shard leases failed; deciding every retryPeriod meanwhile", { error: message });
        await sleep(this.options.retryPeriodMs, signal);
      }
    }
  }

  /** A (re)list is the whole truth: a Lease it lacks was deleted meanwhile (unless we wrote it since). */
  private forgetUnlisted(listed: ReadonlySet<string>, resourceVersion: string): void {
    for (const [name, entry] of this.seen) {
      if (!listed.has(name) && !newer(entry.object.metadata.resourceVersion, resourceVersion)) this.seen.delete(name);
    }
  }
}
