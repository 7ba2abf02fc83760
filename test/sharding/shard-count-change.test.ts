// A rolling update that changes `sharding.shards`: replicas with different counts cut the hash
// space differently (shard 3 of 16 overlaps shards 4 and 5 of 24), so they must never hold shards
// at once. The pure rule (assign.ts), then two real replicas on the sandbox.
import { expect, test } from "bun:test";
import { assign, coverage, type AssignmentInput, type ForeignLeaseView, type MemberView } from "../../src/sharding/assign.ts";
import { eventually } from "../peering/helpers.ts";
import { shardReplicas } from "./replicas.ts";

const T = Date.parse("2030-01-01T00:00:00Z");
const D = 15_000;
const member = (id: string, shards?: number): MemberView => ({ id, observedAt: T, durationMs: D, ...(shards ? { shards } : {}) });
const free = (n: number) => Array.from({ length: n }, (_, index) => ({ index, observedAt: T - D, durationMs: D }));
const foreign = (holder: string, shards: number, indexes: number[]): ForeignLeaseView[] => indexes.map((index) => ({ index, holder, observedAt: T, durationMs: D, shards }));
const input = (over: Partial<AssignmentInput>): AssignmentInput => ({ now: T + 1000, self: "new", shards: 24, leases: free(24), members: [], held: new Set(), ...over });

test("a replica takes no shard while replicas with another count hold some, and shares are made without them", () => {
  const waiting = assign(input({ members: [member("old", 16)], foreign: foreign("old", 16, [0, 1, 2]) }));
  expect(waiting.acquire).toEqual([]);
  expect(waiting.release).toEqual([]);
  expect(waiting.waitingFor).toEqual({ shards: 16, holders: ["old"] });
  expect(waiting.nextChangeAt).toBe(T + D); // when their Leases would expire unrenewed

  // the old replica, seeing the new one (which holds nothing): it is not counted in the shares
  const old = assign(input({ self: "old", shards: 16, leases: free(16), members: [member("new", 24)] }));
  expect(old.live).toEqual(["old"]);
  expect(old.acquire).toHaveLength(16);

  // once their Leases expire (or are released), the new count takes everything
  const after = assign(input({ now: T + D + 1, members: [member("old", 16)], foreign: foreign("old", 16, [0, 1, 2]) }));
  expect(after.waitingFor).toBeUndefined();
  expect(after.acquire).toHaveLength(24);
});

test("when both counts hold shards (they started together), the smaller count gives all of its up", () => {
  const smaller = assign(input({ self: "a", shards: 16, leases: free(16), held: new Set([0, 1]), members: [member("b", 24)], foreign: foreign("b", 24, [5]) }));
  expect(smaller.release.sort()).toEqual([0, 1]);
  const larger = assign(input({ self: "b", held: new Set([5]), members: [member("a", 16)], foreign: foreign("a", 16, [0, 1]) }));
  expect(larger.release).toEqual([]);
  expect(larger.acquire).toEqual([]);
});

test("a waiting replica reports no gaps nor orphans: the hash space is the other count's", () => {
  const waiting = input({ members: [member("old", 16)], foreign: foreign("old", 16, [0, 1, 2]), leases: free(24).map((l, i) => (i < 3 ? { ...l, holder: "old", observedAt: T } : l)) });
  expect(coverage(waiting)).toEqual({ gaps: [], orphans: [], overlaps: [] });
  expect(coverage({ ...waiting, foreign: [] }).gaps).toHaveLength(21); // the same Leases seen without the other count
});

test("replicas that announce no count (an older kobun) are counted as before", () => {
  const d = assign(input({ members: [member("older")] }));
  expect(d.live).toEqual(["new", "older"]);
  expect(d.waitingFor).toBeUndefined();
});

const replicas = shardReplicas();
const timing = { durationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 250, graceMs: 500 };

test("on the sandbox: a replica with a new count waits until the old one is gone, then takes every shard", async () => {
  const old = replicas.replica("old", { shards: 4, ...timing });
  await eventually(() => old.leases.owned.length === 4, 10_000, "the old replica holds its 4 shards");
  const takenWhileOldLived: number[][] = [];
  let oldGone = false;
  const fresh = replicas.replica("new", { shards: 6, ...timing, onChange: (owned) => void (oldGone || takenWhileOldLived.push([...owned])) });
  await eventually(() => fresh.lines.some((l) => l.includes("replicas with another shard count hold shards")), 10_000, "the new replica says it waits");
  // Nothing to await for "nothing happens": four retry periods are four decisions at least (each renewal asks for one).
  await Bun.sleep(4 * timing.retryPeriodMs);
  expect(takenWhileOldLived).toEqual([]);
  expect(old.leases.owned).toEqual([0, 1, 2, 3]);
  oldGone = true;
  old.controller.abort();
  await old.done; // it releases its shards as it stops
  await eventually(() => fresh.leases.owned.length === 6, 10_000, "the new replica holds all 6 shards");
  expect(fresh.lines.some((l) => l.includes("no replica with another shard count holds shards any more"))).toBe(true);
}, 20_000);
