// Which live replicas are not taking shards, remembered across decisions (assign.ts is pure and
// has no memory). A replica stays below its quota while a shard has been free for a whole lease
// duration: any replica that takes shards takes a free one within milliseconds (the watch tells
// it), so this one does not (its shard writes fail, say, while its membership is renewed). The
// others then share as if it were not there: no release "for rebalancing" towards it (it would
// not take the shard, which comes back after a duration, then goes again: a handover, a LIST and
// a coverage warning every second), and the ceiling counts only the replicas taking.
// The mark goes when that replica holds more shards than when it was marked, when it is no longer
// live, or after RETRY_DURATIONS lease durations: then one release towards it tests it again (a
// replica that was only stalled, say, gets its share back; one still not taking costs one
// handover per that window instead of one a second).

import { liveHolder, liveMembers, quotaOf, type AssignmentInput } from "./assign.ts";

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

/** Some shard has had no live holder for a whole lease duration (beyond its expiry, for a holder that lapsed). */
export function neglected(input: AssignmentInput): boolean {
  return input.leases.some((lease) => {
    if (input.held.has(lease.index) || liveHolder(lease, input.now) !== undefined) return false;
    const freeSince = lease.holder ? lease.observedAt + lease.durationMs : lease.observedAt;
    return input.now - freeSince >= lease.durationMs;
  });
}

export class NotTaking {
  /** Replica id → when it was marked, and how many shards it held then. */
  private readonly marked = new Map<string, { at: number; held: number }>();
  /** The marked ids, kept up to date in place (assign.ts reads it). */
  readonly ids = new Set<string>();

  constructor(private readonly durationMs: number) {}

  /** Marks and unmarks by what the Leases say now; returns the ids newly marked. */
  update(input: AssignmentInput): string[] {
    const live = liveMembers(input.now, input.self, input.members);
    const counts = heldBy(input);
    for (const [id, mark] of this.marked) {
      const gone = !live.includes(id) || (counts.get(id) ?? 0) > mark.held || input.now - mark.at >= RETRY_DURATIONS * this.durationMs;
      if (gone) this.unmark(id);
    }
    if (!neglected(input)) return [];
    const added: string[] = [];
    for (const id of live) {
      const held = counts.get(id) ?? 0;
      if (id === input.self || this.marked.has(id) || held >= quotaOf(id, live, input.shards)) continue;
      this.marked.set(id, { at: input.now, held });
      this.ids.add(id);
      added.push(id);
    }
    return added;
  }

  private unmark(id: string): void {
    this.marked.delete(id);
    this.ids.delete(id);
  }
}
