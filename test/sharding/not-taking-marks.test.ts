// The memory of replicas not taking shards (not-taking.ts), on a fake clock, and what assign()
// makes of it: no release towards them, and a ceiling shared without them.
import { expect, test } from "bun:test";
import { assign, type AssignmentInput, type ShardLeaseView } from "../../src/sharding/assign.ts";
import { NotTaking } from "../../src/sharding/not-taking.ts";

const T = Date.parse("2030-01-01T00:00:00Z");
const D = 2000;
const members = (ids: string[], at: number) => ids.map((id) => ({ id, observedAt: at, durationMs: D }));
/** 4 shards (quotas a 2, b 1, c 1): a holds 0,1, b (self) holds 2, shard 3 free since `freeSince` (or held by b if `held` says so). */
function view(now: number, freeSince: number, over: Partial<AssignmentInput> = {}): AssignmentInput {
  const leases: ShardLeaseView[] = [0, 1, 2, 3].map((index) => ({ index, ...(index < 2 ? { holder: "a" } : index === 2 ? { holder: "b" } : {}), observedAt: index === 3 ? freeSince : now - 100, durationMs: D }));
  return { now, self: "b", shards: 4, leases, members: members(["a", "b", "c"], now - 100), held: new Set([2]), ...over };
}

test("a replica below its quota for two durations while a shard is there for it is marked; not before, nor when none is", () => {
  const marks = new NotTaking(D);
  expect(marks.update(view(T, T))).toEqual([]); // c below its quota from now on, shard 3 free
  expect(marks.update(view(T + 2 * D - 1, T))).toEqual([]);
  expect(marks.update(view(T + 2 * D, T))).toEqual(["c"]);
  expect([...marks.ids]).toEqual(["c"]);
  // Taken and given back again and again (the flapping): b above its quota counts as there for c too.
  const flapping = new NotTaking(D);
  flapping.update(view(T, T));
  flapping.update(view(T + D, T + D, { held: new Set([2, 3]) }));
  expect(flapping.update(view(T + 2 * D, T + 2 * D - 10))).toEqual(["c"]);
  // Nothing there for c (every shard held, nobody above its quota): never marked.
  const full = new NotTaking(D);
  const balanced = (now: number) => view(now, now, { members: members(["a", "b"], now - 100) });
  full.update(balanced(T));
  expect(full.update(balanced(T + 3 * D))).toEqual([]);
});

test("the mark goes when that replica takes a shard, leaves, or after ten durations", () => {
  const marked = () => {
    const marks = new NotTaking(D);
    marks.update(view(T, T));
    marks.update(view(T + 2 * D, T));
    return marks;
  };
  const took = marked();
  const later = view(T + 2 * D + 500, T + 2 * D + 400);
  later.leases[3]!.holder = "c";
  took.update(later);
  expect([...took.ids]).toEqual([]);
  const left = marked();
  left.update(view(T + 2 * D + 500, T + 2 * D + 400, { members: members(["a", "b"], T + 2 * D) }));
  expect([...left.ids]).toEqual([]);
  const waited = marked();
  waited.update(view(T + 12 * D - 1, T + 12 * D - 2));
  expect([...waited.ids]).toEqual(["c"]);
  waited.update(view(T + 12 * D, T + 12 * D - 1));
  expect([...waited.ids]).toEqual([]);
});

test("with the idle replica marked, the one below the ceiling keeps the long-free shard it takes", () => {
  // b holds 2 and 3 now (took 3 once it was long-free); quotas a 2, b 1, c 1.
  const input = view(T + D, T, { held: new Set([2, 3]) });
  expect(assign(input).release.length).toBe(1); // unmarked: one released towards c
  expect(assign({ ...input, notTaking: new Set(["c"]) }).release).toEqual([]);
  // A joiner d (not marked) still gets a release; the ceiling is shared without c: ceil(4 / 3).
  const joined = { ...input, members: members(["a", "b", "c", "d"], T + D - 100), notTaking: new Set(["c"]) };
  const decision = assign(joined);
  expect(decision.release.length).toBe(1);
  expect(decision.ceiling).toBe(2);
});
