// Which live replicas are not taking shards, remembered across decisions (assign.ts is pure and
// has no memory). A replica that stays below its quota for STARVED_DURATIONS lease durations
// while shards are there for it (one is free, or another replica holds more than its quota) does
// not take them (its shard writes fail, say, while its membership is renewed): one that does
// takes a free shard within milliseconds of seeing it, and sees the group as it is within one
// duration of its start (a stale membership looks live to it for that long). The others then
// share as if it were not there: no release "for rebalancing" towards it (it would not take the
// shard, which came back a second later, then went again: a handover, a LIST and a coverage
// warning each time), and the ceiling counts only the replicas taking.
// The mark goes when that replica holds more shards than when it was marked, when it is no
// longer live, or after RETRY_DURATIONS durations: then it is offered shards again until marked
// anew (a replica that was only stalled gets its share back; one still not taking costs two
// durations of handovers per RETRY_DURATIONS instead of one a second throughout).

import { liveHolder, liveMembers, quotaOf, type AssignmentInput } from "./assign.ts";

const STARVED_DURATIONS = 2;
const RETRY_DURATIONS = 10;

/** The shards each live holder has, as this replica sees the Leases. */
export function heldBy(input: AssignmentInput): Map<string, number> {
  const counts = new Map<string, number>();
  for (const lease of input.leases) {
    const holder = input.held.has(lease.index) ? input.self : liveHolder(lease, input.now);
    if (holder !== undefined) counts.set(holder, (counts.get(holder) ?? 0) + 1);
  }
  return counts;
}

export class NotTaking {
  /** Replica id → when it was marked, and how many shards it held then. */
  private readonly marked = new Map<string, { at: number; held: number }>();
  /** Replica id → since when it has been below its quota with shards there for it. */
  private readonly starved = new Map<string, number>();
  /** The marked ids, kept up to date in place (assign.ts reads it). */
  readonly ids = new Set<string>();

  /** `durationMs`: the group's lease duration. */
  constructor(private readonly durationMs: number) {}

  /** Marks and unmarks by what the Leases say now; returns the ids newly marked. */
  update(input: AssignmentInput): string[] {
    const { now, shards } = input;
    const live = liveMembers(now, input.self, input.members, shards);
    const counts = heldBy(input);
    for (const [id, mark] of this.marked) {
      const took = (counts.get(id) ?? 0) > mark.held;
      if (!live.includes(id) || took || now - mark.at >= RETRY_DURATIONS * this.durationMs) this.unmark(id);
    }
    const free = input.leases.length > [...counts.values()].reduce((a, b) => a + b, 0);
    const crowded = free || live.some((id) => (counts.get(id) ?? 0) > quotaOf(id, live, shards));
    const added: string[] = [];
    for (const id of live) {
      const held = counts.get(id) ?? 0;
      if (id === input.self || this.marked.has(id) || !crowded || held >= quotaOf(id, live, shards)) {
        this.starved.delete(id);
        continue;
      }
      const since = this.starved.get(id) ?? now;
      this.starved.set(id, since);
      if (now - since < STARVED_DURATIONS * this.durationMs) continue;
      this.starved.delete(id);
      this.marked.set(id, { at: now, held });
      this.ids.add(id);
      added.push(id);
    }
    for (const id of this.starved.keys()) if (!live.includes(id)) this.starved.delete(id);
    return added;
  }

  private unmark(id: string): void {
    this.marked.delete(id);
    this.ids.delete(id);
  }
}
