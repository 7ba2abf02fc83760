// sharding/: which shards of the hash space this replica owns, over Leases, so that replicas
// of one operator are all active, each on its part of the objects. The hash and the ranges
// are KEP-5866's (so the API server can filter the watches itself); the assignment is a pure
// decision (assign.ts); the Lease I/O hands a shard over only after its work stopped.
// Must never: let two replicas work on one shard at once, or release a shard whose cycles still run.

export { assign, coverage, type Assignment, type Coverage } from "./assign.ts";
export { fnv1a64, objectHash, type ShardKey } from "./hash.ts";
export { ShardHolds, type ShardHold } from "./holds.ts";
export { GROUP_LABEL, memberLeaseName, ShardLeases, type ShardClient } from "./leases.ts";
export type { HandoverDirection, ShardObserver } from "./observer.ts";
export { HASH_SPACE, inRanges, mergedRanges, shardOf, shardRange, type HashRange } from "./ranges.ts";
export { buildShardSelector, parseShardSelector, serverApplied, ShardSelectorError } from "./selector.ts";
export { Sharding, type ShardingOptions } from "./sharding.ts";
