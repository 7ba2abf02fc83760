// Sharding: what the runtime asks of this room. It runs the shard Leases (leases.ts), answers
// "is this object ours?" by the same FNV-1a hash the API server uses (hash.ts), gives each
// cycle a hold on its object's shard (holds.ts: handover waits for it), and tells who listens
// of every change of the owned shards (runtime/ lays the streams over them); `detect()`
// asks the server once per resource whether it does (the echo of KEP-5866's list metadata).

import type { KubeClient } from "../kube/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import { objectHash, type ShardKey } from "./hash.ts";
import type { ShardHold } from "./holds.ts";
import { ShardLeases, type ShardLeasesOptions } from "./leases.ts";
import { shardOf, shardRange } from "./ranges.ts";
import { buildShardSelector, serverApplied } from "./selector.ts";

/** The shard Leases' options (leases.ts), and what places an object in a shard. */
export type ShardingOptions = Omit<ShardLeasesOptions, "onChange" | "onForget"> & { key: ShardKey };

export class Sharding {
  readonly leases: ShardLeases;
  private readonly listeners = new Set<(owned: readonly number[]) => void>();
  private readonly forgetting = new Set<(shards: readonly number[]) => void>();

  constructor(private readonly options: ShardingOptions) {
    this.leases = new ShardLeases({
      ...options,
      onChange: (owned) => {
        for (const listener of this.listeners) listener(owned);
      },
      onForget: (shards) => {
        for (const listener of this.forgetting) listener(shards);
      },
    });
  }

  get owned(): number[] {
    return this.leases.owned;
  }

  /** Hears every change of the owned shards. */
  onChange(listener: (owned: readonly number[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Hears when what is kept per object of some shards is to go (given up and ended, or taken:
   * ShardLeasesOptions.onForget).
   */
  onForget(listener: (shards: readonly number[]) => void): () => void {
    this.forgetting.add(listener);
    return () => this.forgetting.delete(listener);
  }

  shardOf(object: Pick<KubeObject, "metadata">): number {
    return shardOf(objectHash(object, this.options.key), this.options.shards);
  }

  /** Is the object in a shard this replica works on now? */
  owns(object: Pick<KubeObject, "metadata">): boolean {
    return this.leases.holds.has(this.shardOf(object));
  }

  /** A cycle's hold on its object's shard: the signal a handover aborts, and exit() when done. */
  hold(object: Pick<KubeObject, "metadata">): ShardHold {
    return this.leases.holds.enter(this.shardOf(object));
  }

  /**
   * Does the API server apply `shardSelector` to this resource? One LIST of one object with a
   * selector of the whole hash space: the echo says yes, its absence no (no feature gate).
   */
  async detect(
    client: Pick<KubeClient, "list">, resource: Resource, namespace: string | null, signal: AbortSignal,
  ): Promise<boolean> {
    const selector = buildShardSelector(this.options.key, [shardRange(0, 1)]);
    const list = await client.list(resource, { namespace, shardSelector: selector, limit: 1, signal });
    return serverApplied(selector, list.metadata);
  }

  run(signal: AbortSignal): Promise<void> {
    return this.leases.run(signal);
  }
}
