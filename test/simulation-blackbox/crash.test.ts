// docs/testing.md, "Simulation": a crash between two writes, as an operator author meets it. A
// reconcile that makes its second child only when the first is missing is killed between the two
// creates; simulate() reports the failing schedule (its seed, the fault, what happened, the broken
// invariant) and how to replay it, and both replays (the seed, the exact faults printed) fail the
// same way. The fixed reconcile, which checks each child on its own, passes every schedule.

import { expect, test } from "bun:test";
import { adopt, Registry, resource } from "kobun";
import { simulate, type Fault, type World } from "kobun/testing";
import { configMap, failureOf, Gadgets } from "./helpers.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.reconcile(Gadgets, async ({ name, body, api, cache }) => {
    const has = (child: string) => cache.get(resource.configmaps, child) !== undefined;
    if (!fixed && has(`${name}-a`)) return;                   // the bug: "a" made, so "b" must be too
    for (const child of [`${name}-a`, `${name}-b`]) {
      if (!has(child)) await api.create(adopt(configMap(child), { owner: body }));
    }
  }, { owns: [resource.configmaps] });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 1 } });
};
const invariants = {
  "a Gadget has both children": async (world: World) => {
    const names = (await world.list(resource.configmaps)).map((c) => c.metadata.name);
    const half = (await world.list(Gadgets)).filter((g) => names.includes(`${g.metadata.name}-a`)
      !== names.includes(`${g.metadata.name}-b`));
    return half.length === 0 || `half made: ${half.map((g) => g.metadata.name).join(", ")} (children ${names})`;
  },
};
const killedBetween: Fault = {
  kind: "crash", after: { verb: "create", plural: "configmaps", name: "g1-a", nth: 1 },
};

test("buggy: killed between its two creates, the reconcile never makes the second; the report tells it all", async () => {
  const failure = await failureOf(simulate({ registry: operator(false), scenario, invariants }));
  const lines = failure.report.split("\n");
  // the first schedule is the crash after the first write (the systematic crash points come first)
  expect(lines[0]).toBe(`simulate: schedule "1/0" fails (0 other schedules passed)`);
  expect(lines[1]).toBe("faults:");
  expect(lines[2]).toBe("  - the operator killed right after its 1st create of configmaps g1-a, then restarted");
  expect(lines[3]).toBe("what happened:");
  expect(lines[4]).toBe(`  step 1: apply gadgets g1: {"spec":{"size":1}}`);   // what it applied, beside the name
  expect(lines[5]).toContain("its 1st create of configmaps g1-a: instance 1 killed here; instance 2 starts");
  expect(lines[6]).toBe(`check failed after step 1: invariant: invariant "a Gadget has both children" broken ` +
    "after step 1: half made: g1 (children g1-a)");
  expect(lines.at(-1)).toStartWith(`replay: simulate({ ...options, seed: "1/0" }), or exactly these faults: ` +
    "simulate({ ...options, schedule: ");
  expect(failure.failure).toEqual({ check: "invariant", step: 1, message: expect.any(String), details: [] });
  expect(failure.schedule).toEqual({ seed: "1/0", faults: [killedBetween] });
  expect(failure.shrunk).toEqual([killedBetween]);
  expect(failure.passed).toBe(0);

  // replay by seed: that one schedule only, the same failure
  const bySeed = await failureOf(simulate({ registry: operator(false), scenario, invariants, seed: "1/0" }));
  expect(bySeed.report).toBe(failure.report);
  // replay by the faults the report prints, copied from its last line
  const printed = JSON.parse(lines.at(-1)!.replace(/^.*schedule: (\[.*\]) \}\)$/, "$1")) as Fault[];
  expect(printed).toEqual([killedBetween]);
  const byFaults = await failureOf(simulate({ registry: operator(false), scenario, invariants, schedule: printed }));
  expect(byFaults.failure).toEqual(failure.failure);
  expect(byFaults.shrunk).toEqual([killedBetween]);
}, 60_000);

test("fixed: each child checked on its own; every schedule passes, the crash points first", async () => {
  const result = await simulate({ registry: operator(true), scenario, invariants });
  expect(result.crashPoints).toBe(2);                         // its two creates in the reference run
  expect(result.runs.map((run) => run.seed)).toEqual(Array.from({ length: 16 }, (_, i) => `1/${i}`));
  expect(result.runs.every((run) => run.ok)).toBe(true);
  expect(result.runs.slice(0, 2).map((run) => run.faults)).toEqual([
    [killedBetween],
    [{ kind: "crash", after: { verb: "create", plural: "configmaps", name: "g1-b", nth: 1 } }],
  ]);
  // the fault the buggy operator failed under, replayed on the fixed one: it passes
  const replayed = await simulate({ registry: operator(true), scenario, invariants, schedule: [killedBetween] });
  expect(replayed.runs.map((run) => [run.faults, run.ok])).toEqual([[[killedBetween], true]]);
  // a fault whose point never comes does nothing (the docs' `schedule` row): no write of that name, a pass
  const elsewhere: Fault = { kind: "crash", after: { verb: "create", plural: "configmaps", name: "other-a", nth: 1 } };
  const missed = await simulate({ registry: operator(false), scenario, invariants, schedule: [elsewhere] });
  expect(missed.runs.map((run) => run.ok)).toEqual([true]);
}, 60_000);

test("shrinking: a failing schedule of two faults is reported as the one that matters; shrink: false keeps both", async () => {
  const noise: Fault = { kind: "delay", plural: "gadgets", ms: 300 };
  const run = (shrink: boolean) => failureOf(simulate({
    registry: operator(false), scenario, invariants, schedule: [killedBetween, noise], shrink,
  }));
  const shrunk = await run(true);
  expect(shrunk.shrunk).toEqual([killedBetween]);
  expect(shrunk.schedule.faults).toEqual([killedBetween, noise]);
  expect(shrunk.report).toContain("faults (shrunk from 2):\n  - the operator killed right after its 1st create");
  expect(shrunk.report).not.toContain("watch events of gadgets delivered 300 ms late");
  // a schedule given as faults has no seed to replay it by: the report offers the faults only
  expect(shrunk.report.split("\n").at(-1)).toBe(`replay: simulate({ ...options, schedule: ${JSON.stringify([killedBetween])} })`);
  const kept = await failureOf(run(false));
  expect(kept.shrunk).toEqual([killedBetween, noise]);
  expect(kept.report).toContain("faults:\n  - the operator killed right after");
  expect(kept.report).toContain("  - watch events of gadgets delivered 300 ms late (a stale cache)");
  expect(kept.failure.check).toBe("invariant");
}, 60_000);

// The guide's first example (testing-kit.test.ts finds its bug): its fix, as the guide words it,
// passes every schedule, in the Kopf style the example is written in.
test("the guide's fix: the create handler's children named and written with api.apply, one each whatever the crash", async () => {
  const registry = new Registry();
  registry.on.create(Gadgets, async ({ name, body, api }) => {
    for (const part of ["config", "secret-ref"]) await api.apply(adopt(configMap(`${name}-${part}`), { owner: body }));
  }, { id: "children" });
  const result = await simulate({ registry, scenario });
  expect(result.runs.length).toBe(16);
  expect(result.runs.filter((run) => run.faults.some((fault) => fault.kind === "crash")).length).toBeGreaterThan(2);
}, 60_000);

test("a step that applies a Secret tells its keys, never its values (a report lands in CI logs)", async () => {
  const withSecret = async (world: World) => {
    await world.apply(resource.secrets, { metadata: { name: "creds" }, stringData: { password: "hunter2" } });
    await scenario(world);
  };
  const failure = await failureOf(simulate({ registry: operator(false), scenario: withSecret, invariants }));
  expect(failure.report).toContain(`step 1: apply secrets creds: {"stringData":"<1 key>"}`);
  expect(failure.report).not.toContain("hunter2");
}, 60_000);
