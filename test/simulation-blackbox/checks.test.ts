// docs/testing.md, "The scenario and the checks": each check simulate() makes, as an author meets
// it. An invariant broken by false, by a string or by a throw (and holding by true or nothing),
// checked after every step and at the end; a deletion never completed; a run that never settles
// (timers firing without pause, or requests without pause); a handler promised to run once that
// ran twice; volatile paths left out of the comparison; a scenario that throws. A check that
// fails in the fault-free run already is reported as such, without a schedule.

import { expect, test } from "bun:test";
import { adopt, Registry, resource, TemporaryError } from "kobun";
import { simulate, type World } from "kobun/testing";
import { configMap, failureOf, Gadgets, refusal } from "./helpers.ts";

function quiet(): Registry {
  const registry = new Registry();
  registry.on.create(Gadgets, () => {}, { id: "noop" });
  return registry;
}
const one = async (world: World) => { await world.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 1 } }); };

test("invariants: false, a string or a throw breaks one, named, after its step; true or nothing holds", async () => {
  const seen: number[] = [];
  const holding = {
    "true holds": () => true,
    "nothing holds": (world: World) => { seen.push(world.step); },
  };
  const two = async (world: World) => {
    await one(world);
    expect(world.step).toBe(1);
    await world.get(Gadgets, "g1");                             // reads are no step
    expect((await world.list(Gadgets)).map((g) => g.metadata.name)).toEqual(["g1"]);
    await world.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 2 } });
  };
  const passed = await simulate({ registry: quiet(), scenario: two, invariants: holding, schedules: 1 });
  expect(passed.runs.map((run) => run.ok)).toEqual([true]);
  expect(seen.slice(0, 3)).toEqual([1, 2, 2]);                  // after each step, then at the end (reference run)
  for (const [returns, said] of [
    [() => false, "it returned false"], [() => "two where one", "two where one"],
    [() => { throw new Error("no list"); }, "it threw: no list"],
  ] as const) {
    const { failure, report } = await failureOf(simulate({
      registry: quiet(), scenario: two, invariants: { ...holding, "my rule": returns },
    }));
    expect(report.split("\n")[0]).toBe("simulate: the fault-free reference run fails already");
    expect(failure).toEqual({ check: "invariant", step: 1, message: `invariant "my rule" broken after step 1: ${said}`, details: [] });
  }
}, 60_000);

test("deletion: a delete handler that never finishes holds the finalizer; reported with who holds it", async () => {
  const registry = quiet();
  registry.on.delete(Gadgets, () => { throw new TemporaryError("not yet", { delay: 3600 }); }, { id: "hold" });
  const scenario = async (world: World) => { await one(world); await world.delete(Gadgets, "g1"); };
  const { failure, report } = await failureOf(simulate({ registry, scenario }));
  expect(report).toContain("  step 2: delete gadgets g1");
  expect(failure).toEqual({
    check: "deletion", message: "a deletion never completed",
    details: [`gadgets default/g1 is still being deleted, held by the finalizers ["kobun.dev/finalizer"]`],
    failing: ["gadgets default/g1: Handler 'hold' failed temporarily: not yet"],   // why it is held
  });
}, 60_000);

test("settle: a reconcile requeued every millisecond fails as a storm past maxFirings", async () => {
  const registry = new Registry();
  registry.on.reconcile(Gadgets, () => ({ requeueAfter: 0.001 }));
  const { failure } = await failureOf(simulate({ registry, scenario: one, maxFirings: 50 }));
  expect(failure.check).toBe("settle");
  expect(failure.step).toBe(1);
  expect(failure.message).toStartWith("timers kept firing: more than 50 in one settle");
}, 60_000);

test("settle: a handler sending requests without a pause fails once settleTimeout has passed", async () => {
  const registry = new Registry();
  registry.on.create(Gadgets, async ({ api, name, signal }) => {
    while (!signal?.aborted) await api.get(Gadgets, name);      // busy for ever: no pause, no end
  }, { id: "spin" });
  const started = performance.now();
  const { failure } = await failureOf(simulate({ registry, scenario: one, settleTimeout: 400 }));
  expect(failure.check).toBe("settle");
  expect(failure.message).toContain("never went quiet");
  expect(performance.now() - started).toBeLessThan(30_000);
}, 60_000);

test("once: a handler that writes before kobun records its success runs twice after a crash", async () => {
  const registry = new Registry();
  registry.on.create(Gadgets, async ({ name, body, api }) => {
    await api.apply(adopt(configMap(`${name}-data`), { owner: body }));
  }, { id: "provision" });
  const { failure, report } = await failureOf(simulate({ registry, scenario: one, once: ["provision"] }));
  expect(report.split("\n")[2]).toStartWith("  - the operator killed ");
  expect(failure.check).toBe("once");
  expect(failure.message).toBe("a once-only handler ran twice");
  expect(failure.details).toEqual(["handler 'provision' of g1 succeeded 2 times (by instances [1] [2])"]);
  // the same operator passes when `once` is not asked: it converges all the same
  await simulate({ registry, scenario: one, schedules: 4 });
}, 60_000);

test("once: a sub-handler named by its qualified id is checked; one that never ran in the fault-free run is refused", async () => {
  const registry = new Registry();
  registry.on.create(Gadgets, ({ subhandler }) => {
    subhandler("data", async ({ name, body, api }) => { await api.apply(adopt(configMap(`${name}-data`), { owner: body })); });
  }, { id: "provision" });
  const { failure } = await failureOf(simulate({ registry, scenario: one, once: ["provision/data"] }));
  expect(failure.check).toBe("once");
  expect(failure.details).toEqual(["handler 'provision/data' of g1 succeeded 2 times (by instances [1] [2])"]);
  // Before, a misspelt sub-handler passed as its parent's: a check that could never fail.
  expect(await refusal(simulate({ registry, scenario: one, once: ["provision/dta"] }))).toBe(
    'simulate({ once }): no sub-handler "provision/dta" ran in the fault-free run, so it could never run twice ' +
    '(the sub-handlers that ran: "provision/data")');
}, 60_000);

test("volatile: a field that differs from run to run fails convergence until declared volatile; Events are not compared", async () => {
  const registry = new Registry();
  let made = 0;
  registry.on.create(Gadgets, ({ event, body }) => {
    event.info(body, "Stamped", `at random ${Math.random()}`);   // Events are never compared
    return { serial: `s${++made}` };                              // a new value each run
  }, { id: "stamp" });
  const { failure } = await failureOf(simulate({ registry, scenario: one, schedules: 1 }));
  expect(failure.check).toBe("convergence");
  expect(failure.details).toEqual([expect.stringMatching(/^~ gadgets default\/g1: status\.stamp\.serial: "s1" in the reference, "s\d+" here$/)]);
  await simulate({ registry, scenario: one, schedules: 3, volatile: ["status.stamp.serial"] });
  await simulate({ registry, scenario: one, schedules: 1, volatile: ["status.*.serial"] });   // `*` for any key
}, 60_000);

test("volatile: a key with dots (an annotation named by domain) is named with `\\.`, as the report prints it", async () => {
  const registry = new Registry();
  let made = 0;
  registry.on.reconcile(Gadgets, ({ annotations, patch }) => {
    if (annotations["example.com/serial"]) return;
    patch.metadata.annotations = { "example.com/serial": `s${++made}`, "example.com/kept": "same" };
  });
  const { failure } = await failureOf(simulate({ registry, scenario: one, schedules: 1 }));
  expect(failure.details).toEqual([
    expect.stringMatching(/^~ gadgets default\/g1: metadata\.annotations\.example\\\.com\/serial: "s1" in the reference, "s\d+" here$/),
  ]);
  // Before, the path was split at every dot: no volatile path could name such a key.
  await simulate({ registry, scenario: one, schedules: 3, volatile: ["metadata.annotations.example\\.com/serial"] });
}, 60_000);

test("an invariant that remembers (the first password seen) keeps its memory per run, keyed by its world", async () => {
  const seen = new WeakMap<World, number[]>();                    // one world per run: a fresh memory for each
  const worlds = new Set<World>();
  const two = async (world: World) => {
    await one(world);
    await world.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 2 } });
  };
  const { runs } = await simulate({ registry: quiet(), scenario: two, schedules: 3, invariants: {
    "steps only go forward within a run": (world) => {
      worlds.add(world);
      const steps = seen.get(world) ?? [];
      if (steps.some((step) => step > world.step)) return `step ${world.step} after ${steps.join(", ")}`;
      seen.set(world, [...steps, world.step]);
    },
  } });
  expect(worlds.size).toBe(runs.length + 1);                      // each schedule's run, and the reference run
}, 60_000);

test("a scenario that throws fails the run at its step, with its message", async () => {
  const scenario = async (world: World) => { await one(world); throw new Error("my scenario broke"); };
  const { failure } = await failureOf(simulate({ registry: quiet(), scenario }));
  expect(failure).toEqual({ check: "scenario", step: 1, message: "the scenario failed at step 1: my scenario broke", details: [] });
}, 60_000);

test("a failed check names the objects the operator was failing on then: a few, one line each, never a Secret", async () => {
  const registry = new Registry();
  let calls = 0;
  registry.on.reconcile(Gadgets, ({ name }) => {
    if (name === "g0" && ++calls > 1) return;                   // fails once, then succeeds: not failing any more
    throw new Error(`${name} is broken`);
  });
  registry.on.reconcile(resource.secrets, ({ body }) => {
    throw new Error(`cannot log in as ${atob(body.data!.password!)}`);  // a Secret's error may quote its data
  });
  const gadgets = Array.from({ length: 8 }, (_, i) => ({ metadata: { name: `g${i}` }, spec: {} }));
  let finished = false;
  const { failure, report } = await failureOf(simulate({
    registry, schedules: 1, horizon: 5,
    scenario: async (world) => {
      finished = false;
      await world.apply(resource.secrets, { metadata: { name: "s1" }, stringData: { password: "hunter2" } });
      await world.applyAll(Gadgets, gadgets);
      finished = true;
    },
    invariants: { "never at the end": () => !finished },
  }));
  expect(failure.check).toBe("invariant");
  expect(failure.failing).toHaveLength(6);
  expect(failure.failing!.slice(0, 5)).toEqual(Array(5).fill(expect.stringMatching(
    /^gadgets default\/g[1-7]: Reconcile '[^']+' failed; retrying in \S+: g[1-7] is broken$/)));
  expect(failure.failing![5]).toBe("... and 2 more");            // the Secret's failure not among them
  expect(report).not.toContain("hunter2");
  expect(report).not.toContain("secrets default/s1:");
}, 30_000);
