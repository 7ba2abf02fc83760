// What the shard Leases report, without knowing who listens (runtime/ turns it into metrics,
// as it does for watching/'s WatchObserver). Called on decisions and handovers, not per object.

import type { Coverage } from "./assign.ts";
import type { Logger } from "../util/index.ts";

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

/**
 * Reports each new coverage (from every decision) to the observer, and warns of what is off:
 * an overlap at once; a gap or an orphan unless it is the first view (before any shard is taken).
 */
export function coverageReport(log: Logger, observer: ShardObserver | undefined): (found: Coverage) => void {
  let last = "";
  return (found) => {
    const key = JSON.stringify(found);
    if (key === last) return;
    const first = last === "";
    last = key;
    observer?.coverage(found);
    if (found.overlaps.length > 0 || (!first && (found.gaps.length > 0 || found.orphans.length > 0))) {
      const { gaps, orphans, overlaps } = found;
      const fields = { gaps: gaps.join(","), orphans: orphans.join(","), overlaps: overlaps.join(",") };
      log.warn("shard coverage: not every shard has exactly one live owner", fields);
    }
  };
}

/** Replicas with another shard count (`shards`) that hold shards (assign.ts's `waitingFor`). */
type Waiting = { shards: number; holders: string[] } | undefined;

/**
 * Tells `onWaiting` and the log once when replicas with another shard count than ours (`shards`)
 * hold shards, and once when they are gone.
 */
export function waitingReport(
  log: Logger, shards: number, onWaiting: (waiting: Waiting) => void,
): (waiting: Waiting) => void {
  let last: string | undefined;
  return (waiting) => {
    const key = waiting ? `${waiting.shards}|${waiting.holders.join(",")}` : undefined;
    if (key === last) return;
    last = key;
    onWaiting(waiting);
    if (waiting) {
      log.warn(
        "replicas with another shard count hold shards (a rolling update changing sharding.shards?): " +
          "this one takes none until they are gone",
        { shards, theirs: waiting.shards, holders: waiting.holders.join(", ") },
      );
    } else log.info("no replica with another shard count holds shards any more: shares are made again");
  };
}
