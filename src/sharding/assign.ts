// Which shards this replica should take or give up, as a pure function of what the Leases say
// and the time now (no I/O, no clock reads: test/sharding/assign.test.ts runs it on a fake clock).
//
// - Live replicas are those whose membership Lease changed less than its duration ago (by OUR
//   clock, when we saw it change, as client-go's leader election judges leases: clock skew
//   between machines does not matter); this replica is always live to itself.
// - Fair share: `ceil(shards / live)` at most. The exact quota is `floor(shards / live)`, plus
//   one for the first `shards mod live` replicas by id, so 16 shards over 3 replicas are 6/5/5,
//   not 6/6/4 (a closer even split). A shard left free for a whole lease duration may be
//   taken by anyone still below the ceiling, so a replica that cannot take its quota (say, it
//   lacks RBAC) leaves no permanent gap.
// - A shard is free when its Lease has no holder or expired (unchanged for its duration), or
//   names this replica while it does not work on it (it stopped the shard at renewDeadline).
// - A replica above its quota releases the excess only while another live replica is below
//   its own: that is when one joins; releasing otherwise would just churn. A replica known not
//   to take shards (`notTaking`, not-taking.ts) counts for neither that nor the ceiling.
// - Which shards: by rendezvous hashing of (replica, shard), so replicas that start together
//   reach for different shards, and each gives away the ones it ranks lowest.

import { fnv1a64 } from "./hash.ts";

export interface ShardLeaseView {
  index: number;
  /** The Lease's holder; absent when nobody holds it (or the Lease does not exist yet). */
  holder?: string;
  /** When we saw this record change last (or first saw it missing), epoch ms by our clock. */
  observedAt: number;
  durationMs: number;
}

export interface MemberView {
  id: string;
  observedAt: number;
  durationMs: number;
  /** The shard count the replica announces (`sharding.shards`); absent from replicas that do not say. */
  shards?: number;
}

/** A shard Lease written by a replica with another shard count (a rolling update that changes `sharding.shards`). */
export interface ForeignLeaseView extends ShardLeaseView {
  shards: number;
}

export interface AssignmentInput {
  now: number;
  self: string;
  shards: number;
  /** One per shard index 0..shards-1. */
  leases: readonly ShardLeaseView[];
  members: readonly MemberView[];
  /** The shards this replica holds now. */
  held: ReadonlySet<number>;
  /**
   * Live replicas seen not taking shards (not-taking.ts): no release towards them, and the ceiling is
   * shared without them.
   */
  notTaking?: ReadonlySet<string>;
  /** The group's shard Leases written with another shard count. */
  foreign?: readonly ForeignLeaseView[];
}

export interface Assignment {
  /** Live replica ids, sorted. */
  live: string[];
  quota: number;
  ceiling: number;
  /** Free shards to try to acquire, best first. */
  acquire: number[];
  /** Held shards to hand over (after their work has stopped). */
  release: number[];
  /** When something may change without any Lease event (a lease or a member expiring): decide again then. */
  nextChangeAt?: number;
  /**
   * Replicas with another shard count hold shards: none is taken until they are gone (and ours are
   * given up if theirs is larger).
   */
  waitingFor?: { shards: number; holders: string[] };
}

const expiresAt = (v: { observedAt: number; durationMs: number }) => v.observedAt + v.durationMs;

/**
 * The live replicas (self included), sorted by id. With `shards`, only those announcing the same
 * count (or none): shares are made among replicas that cut the hash space alike.
 */
export function liveMembers(now: number, self: string, members: readonly MemberView[], shards?: number): string[] {
  const live = new Set([self]);
  for (const m of members) {
    const sameCount = shards === undefined || m.shards === undefined || m.shards === shards;
    if (expiresAt(m) > now && sameCount) live.add(m.id);
  }
  return [...live].sort();
}

/** The exact quota of `id` among `live` (sorted) for `shards`. */
export function quotaOf(id: string, live: readonly string[], shards: number): number {
  const base = Math.floor(shards / live.length);
  return base + (live.indexOf(id) < shards % live.length ? 1 : 0);
}

/** Who holds a shard now: the Lease's holder while it has not expired. */
export function liveHolder(lease: ShardLeaseView, now: number): string | undefined {
  return lease.holder && expiresAt(lease) > now ? lease.holder : undefined;
}

function preference(self: string, index: number): bigint {
  return fnv1a64(`${self}/${index}`);
}

/**
 * While replicas with another shard count hold shards, the two counts cut the hash space
 * differently, so shard i of one overlaps others of the other: nothing is taken until they are
 * gone, and when both hold some (they started together), the smaller count gives its shards up.
 */
function waitForOtherCount(input: AssignmentInput, live: string[]): Assignment | undefined {
  const held = (input.foreign ?? []).filter((lease) => liveHolder(lease, input.now) !== undefined);
  if (held.length === 0) return undefined;
  const larger = held.some((lease) => lease.shards > input.shards);
  const release = larger ? [...input.held] : [];
  const nextChangeAt = Math.min(...held.map(expiresAt));
  const shards = held.find((lease) => lease.shards > input.shards)?.shards ?? held[0]!.shards;
  const holders = [...new Set(held.map((lease) => lease.holder!))].sort();
  return { live, quota: 0, ceiling: 0, acquire: [], release, nextChangeAt, waitingFor: { shards, holders } };
}

export function assign(input: AssignmentInput): Assignment {
  const { now, self, shards, leases, held } = input;
  const live = liveMembers(now, self, input.members, shards);
  const waiting = waitForOtherCount(input, live);
  if (waiting) return waiting;
  const quota = quotaOf(self, live, shards);
  const idle = input.notTaking ?? new Set<string>();
  const ceiling = Math.ceil(shards / live.filter((id) => id === self || !idle.has(id)).length);
  const counts = new Map<string, number>(live.map((id) => [id, 0]));
  const free: ShardLeaseView[] = [];
  let nextChangeAt: number | undefined;
  const soonest = (at: number) => {
    if (at > now && (nextChangeAt === undefined || at < nextChangeAt)) nextChangeAt = at;
  };
  for (const m of input.members) if (m.id !== self) soonest(expiresAt(m));
  for (const lease of leases) {
    if (held.has(lease.index)) continue;
    const holder = liveHolder(lease, now);
    // Our own Lease for a shard we stopped (lost at renewDeadline, its work aborted): take it
    // back at once rather than leave it idle until it expires.
    if (holder === undefined || holder === self) {
      free.push(lease);
      soonest(expiresAt(lease)); // free for a whole duration: then open to anyone below the ceiling
    } else {
      counts.set(holder, (counts.get(holder) ?? 0) + 1);
      soonest(expiresAt(lease));
    }
  }
  // Each shard's rank hashed once, not four times per comparison (130 µs a decision with 24 free shards).
  const ranks = new Map<number, bigint>();
  const rank = (index: number) => ranks.get(index) ?? ranks.set(index, preference(self, index)).get(index)!;
  const byPreference = (a: number, b: number) => (rank(b) > rank(a) ? 1 : rank(b) < rank(a) ? -1 : 0);
  const acquire: number[] = [];
  if (held.size < ceiling) {
    const wanted = free.map((l) => l.index).sort(byPreference);
    const longFree = new Set(free.filter((l) => expiresAt(l) <= now).map((l) => l.index));
    for (const index of wanted) {
      const room = held.size + acquire.length < quota || (longFree.has(index) && held.size + acquire.length < ceiling);
      if (room) acquire.push(index);
    }
  }
  let deficit = 0;
  for (const id of live) {
    if (id !== self && !idle.has(id)) deficit += Math.max(0, quotaOf(id, live, shards) - (counts.get(id) ?? 0));
  }
  const excess = Math.min(held.size - quota, deficit);
  const release = excess > 0 ? [...held].sort(byPreference).slice(-excess).reverse() : [];
  return { live, quota, ceiling, acquire, release, nextChangeAt };
}

export interface Coverage {
  /** Shards without a live holder. */
  gaps: number[];
  /** Shards held by a replica whose membership has expired (it may be gone, or cut off). */
  orphans: number[];
  /** Shards this replica believes it holds while the Lease names another holder: an overlap. */
  overlaps: number[];
}

/** Every shard should have exactly one live owner: what is off, from this replica's view. */
export function coverage(input: AssignmentInput): Coverage {
  const live = new Set(liveMembers(input.now, input.self, input.members, input.shards));
  const out: Coverage = { gaps: [], orphans: [], overlaps: [] };
  // While another count holds shards, the space is theirs: our count's Leases say nothing of its coverage.
  if ((input.foreign ?? []).some((lease) => liveHolder(lease, input.now) !== undefined)) return out;
  for (const lease of input.leases) {
    const holder = liveHolder(lease, input.now);
    if (input.held.has(lease.index) && lease.holder !== input.self) out.overlaps.push(lease.index);
    else if (holder === undefined && !input.held.has(lease.index)) out.gaps.push(lease.index);
    else if (holder !== undefined && !live.has(holder)) out.orphans.push(lease.index);
  }
  return out;
}
