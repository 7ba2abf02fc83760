// What the shard Leases report, without knowing who listens (runtime/ turns it into metrics,
// as it does for watching/'s WatchObserver). Called on decisions and handovers, not per object.

import type { Coverage } from "./assign.ts";

/**
 * How a shard changed hands here: `acquired` (its Lease written to us, its work started),
 * `released` (its work stopped within the grace and its Lease released to the next owner),
 * `abandoned` (given up without a clean handover: lost at renewDeadline or to another holder,
 * cycles still running past the grace, or a release that did not reach the server, so the
 * next owner waits for the Lease to expire).
 */
export type HandoverDirection = "acquired" | "released" | "abandoned";

export interface ShardObserver {
  /** The shards this replica works on now (after every change). */
  owned(shards: readonly number[]): void;
  handover(direction: HandoverDirection, shard: number): void;
  /** Every shard should have exactly one live owner: what is off now, from this replica's view. */
  coverage(found: Coverage): void;
}
