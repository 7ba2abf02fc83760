// The pure shard assignment on a fake clock: fair shares, joins, deaths, no churn, coverage.
import { expect, test } from "bun:test";
import { assign, coverage, liveMembers, quotaOf, type AssignmentInput, type MemberView, type ShardLeaseView } from "../../src/sharding/assign.ts";

const T = Date.parse("2030-01-01T00:00:00Z");
const D = 15_000;
const member = (id: string, observedAt = T): MemberView => ({ id, observedAt, durationMs: D });

/** Leases for `shards`, holders given per index (undefined = free, seen free at `since`). */
function leases(shards: number, holders: (string | undefined)[], observedAt = T): ShardLeaseView[] {
  return Array.from({ length: shards }, (_, index) => ({ index, holder: holders[index], observedAt, durationMs: D }));
}

function input(over: Partial<AssignmentInput> & Pick<AssignmentInput, "self">): AssignmentInput {
  return { now: T + 1000, shards: 16, leases: leases(16, []), members: [], held: new Set(), ...over };
}

/** Runs every replica's decision in turn, applying acquisitions and releases, until nothing changes. */
function settle(ids: string[], shards: number, start: Map<number, string> = new Map(), now = T + 1000): Map<number, string> {
  const owner = new Map(start);
  for (let round = 0; round < 20; round++) {
    let changed = false;
    for (const self of ids) {
      const held = new Set([...owner].filter(([, o]) => o === self).map(([i]) => i));
      const view = Array.from({ length: shards }, (_, index) => ({ index, holder: owner.get(index), observedAt: now - 1000, durationMs: D }));
      const d = assign({ now, self, shards, leases: view, members: ids.map((id) => member(id, now - 1000)), held });
      for (const i of d.release) { owner.delete(i); changed = true; }
      for (const i of d.acquire) if (!owner.has(i)) { owner.set(i, self); changed = true; }
    }
    if (!changed) return owner;
  }
  throw new Error("the assignment did not settle in 20 rounds");
}
const shares = (owner: Map<number, string>, ids: string[]) => ids.map((id) => [...owner.values()].filter((o) => o === id).length);

test("live members: self always, others while their membership lease is fresh by our clock", () => {
  expect(liveMembers(T + D, "me", [member("a"), member("b", T + 1)])).toEqual(["b", "me"]);
});

test("quotas split the shards as evenly as integers allow, the extra ones to the first ids", () => {
  expect(["a", "b", "c"].map((id) => quotaOf(id, ["a", "b", "c"], 16))).toEqual([6, 5, 5]);
  expect(quotaOf("a", ["a"], 16)).toBe(16);
});

test("a lone replica takes every free shard", () => {
  const d = assign(input({ self: "a", members: [member("a")] }));
  expect(d.acquire.sort((x, y) => x - y)).toEqual([...Array(16).keys()]);
  expect(d.release).toEqual([]);
});

test("three replicas starting together settle on 6/5/5 with every shard owned once", () => {
  const owner = settle(["a", "b", "c"], 16);
  expect(owner.size).toBe(16);
  expect(shares(owner, ["a", "b", "c"])).toEqual([6, 5, 5]);
});

test("a joining replica makes the over-loaded ones release just enough for its share", () => {
  const all = new Map([...Array(16).keys()].map((i) => [i, i < 8 ? "a" : "b"] as [number, string]));
  const d = assign({ now: T + 1000, self: "a", shards: 16, leases: leases(16, [...all.values()]), members: ["a", "b", "c"].map((id) => member(id)), held: new Set([0, 1, 2, 3, 4, 5, 6, 7]) });
  expect(d.quota).toBe(6);
  expect(d.release.length).toBe(2);
  expect(d.acquire).toEqual([]);
  expect(shares(settle(["a", "b", "c"], 16, all), ["a", "b", "c"])).toEqual([6, 5, 5]);
});

test("nothing is released while no live replica is below its quota (no churn)", () => {
  const holders = [...Array(16).keys()].map((i) => (i < 9 ? "a" : "b"));
  // b holds 7 < its quota 8 would trigger a release; with b at 8 and a at 8 nothing moves.
  const even = [...Array(16).keys()].map((i) => (i < 8 ? "a" : "b"));
  const d = assign({ now: T + 1000, self: "a", shards: 16, leases: leases(16, even), members: [member("a"), member("b")], held: new Set([0, 1, 2, 3, 4, 5, 6, 7]) });
  expect(d.release).toEqual([]);
  const over = assign({ now: T + 1000, self: "a", shards: 16, leases: leases(16, holders), members: [member("a"), member("b")], held: new Set([0, 1, 2, 3, 4, 5, 6, 7, 8]) });
  expect(over.release.length).toBe(1);
});

test("a dead replica's shards are taken only once their leases expired, and the next decision is due then", () => {
  const holders = [...Array(16).keys()].map((i) => (i < 8 ? "a" : "dead"));
  const base = { self: "a", shards: 16, members: [member("a", T + 20_000), member("dead", T)], held: new Set([0, 1, 2, 3, 4, 5, 6, 7]) };
  const before = assign({ ...base, now: T + D - 1, leases: leases(16, holders, T) });
  expect(before.acquire).toEqual([]);
  expect(before.nextChangeAt).toBe(T + D);
  const after = assign({ ...base, now: T + D, leases: leases(16, holders, T) });
  expect(after.live).toEqual(["a"]);
  expect(after.acquire.sort((x, y) => x - y)).toEqual([8, 9, 10, 11, 12, 13, 14, 15]);
});

test("a shard free for a whole lease duration goes to anyone below the ceiling, so a replica that takes nothing leaves no gap", () => {
  // 16 over a, b, c: quotas 6/5/5, ceiling 6. a holds 0..5, b holds 6..10, c takes nothing: 11..15 free since T.
  const holders = [...Array(16).keys()].map((i) => (i < 6 ? "a" : i < 11 ? "b" : undefined));
  const base = { self: "b", shards: 16, members: ["a", "b", "c"].map((id) => member(id, T + D)), held: new Set([6, 7, 8, 9, 10]) };
  // held leases are renewed (seen changing recently); free ones have not changed since T
  const view = leases(16, holders, T).map((l) => (l.holder ? { ...l, observedAt: T + D - 1000 } : l));
  expect(assign({ ...base, now: T + D - 1, leases: view }).acquire).toEqual([]);
  const later = assign({ ...base, now: T + D, leases: view });
  expect(later.acquire.length).toBe(1);
  expect(later.acquire[0]).toBeGreaterThanOrEqual(11);
  expect(assign({ ...base, self: "a", held: new Set([0, 1, 2, 3, 4, 5]), now: T + D, leases: view }).acquire).toEqual([]);
});

test("replicas reach for different free shards first", () => {
  const a = assign(input({ self: "a", members: [member("a"), member("b")] })).acquire.slice(0, 4);
  const b = assign(input({ self: "b", members: [member("a"), member("b")] })).acquire.slice(0, 4);
  expect(a).not.toEqual(b);
});

test("coverage names gaps, orphans and overlaps from one replica's view", () => {
  const holders = ["a", undefined, "gone", "b"];
  const c = coverage({ now: T + 1000, self: "a", shards: 4, leases: leases(4, holders), members: [member("a"), member("b")], held: new Set([0, 3]) });
  expect(c).toEqual({ gaps: [1], orphans: [2], overlaps: [3] });
  const settled = settle(["a", "b"], 4);
  const view = leases(4, [0, 1, 2, 3].map((i) => settled.get(i)));
  expect(coverage({ now: T + 1000, self: "a", shards: 4, leases: view, members: [member("a"), member("b")], held: new Set([...settled].filter(([, o]) => o === "a").map(([i]) => i)) })).toEqual({ gaps: [], orphans: [], overlaps: [] });
});

test("a shard whose Lease still names this replica, but which it stopped (lost at renewDeadline), is taken back at once", () => {
  const now = 100_000;
  const leases = Array.from({ length: 4 }, (_, index) => ({ index, holder: "a", observedAt: now - 500, durationMs: 3000 }));
  const d = assign({ now, self: "a", shards: 4, leases, members: [], held: new Set([0, 1, 3]) });
  expect(d.acquire).toEqual([2]);
});
