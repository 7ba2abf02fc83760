// simulate()'s options are checked before anything runs: a misspelt option, a wrong shape, a
// schedule with a fault no kind of which exists, or a master seed whose reported replay seed
// ("<master>/<index>") would be refused, each fails with what was expected instead of running
// something other than the test meant. And a failing schedule given as faults is replayed by its
// faults (it has no seed).

import { expect, test } from "bun:test";
import { checkOptions } from "../../src/testing/simulate-options.ts";
import { simulate, SimulationFailure } from "../../src/testing/index.ts";
import { adopt, Registry } from "../../src/index.ts";
import type { World } from "../../src/testing/index.ts";
import { configMap, Widgets } from "./widgets.ts";

const scenario = async () => {};

test("refused before anything runs, each saying what was expected", () => {
  const refusals: [Record<string, unknown>, string][] = [
    [{ scenario, schedulse: 3 }, 'simulate: no option "schedulse" (the options: scenario, registry,'],
    [{}, "simulate: { scenario } must be an async function"],
    [{ scenario, schedules: 2.5 }, "simulate({ schedules }): must be a whole number of at least 1, not 2.5"],
    [{ scenario, schedules: 0 }, "simulate({ schedules }): must be a whole number of at least 1, not 0"],
    [{ scenario, seed: -3 }, "simulate({ seed }): a master seed is a whole number of at least 0, not -3"],
    [{ scenario, seed: 1.5 }, "simulate({ seed }): a master seed is a whole number of at least 0, not 1.5"],
    [{ scenario, seed: true }, 'simulate({ seed }): a number, or "<master seed>/<schedule index>", not true'],
    [{ scenario, schedule: "crash" }, "simulate({ schedule }): must be an array of faults"],
    [{ scenario, schedule: [{ kind: "bogus" }] }, 'simulate({ schedule }): fault 1 has no kind "bogus" (the kinds: crash,'],
    [{ scenario, schedule: [{ kind: "crash" }] }, "simulate({ schedule }): fault 1 (crash) lacks after|before"],
    [{ scenario, schedule: [{ kind: "merge", plural: "widgets" }] }, "fault 1 (merge) lacks step"],
    [{ scenario, once: "enter" }, 'simulate({ once }): must be an array of strings, not "enter"'],
    [{ scenario, volatile: "status.at" }, "simulate({ volatile }): must be an array of dotted paths or lists of keys, not \"status.at\""],
    [{ scenario, crds: [1] }, "simulate({ crds }): must be an array of strings"],
    [{ scenario, invariants: { ok: true } }, 'simulate({ invariants }): "ok" must be a function'],
    [{ scenario, memo: 3 }, "simulate({ memo }): must be an object or a function making one, not 3"],
    [{ scenario, namespace: "" }, 'simulate({ namespace }): must be a namespace\'s name, not ""'],
    [{ scenario, shrink: "no" }, 'simulate({ shrink }): must be true or false, not "no"'],
    [{ scenario, config: [] }, "simulate({ config }): must be an object, not []"],
    [{ scenario, registry: {} }, "simulate({ registry }): must be a Registry (new Registry(), its handlers declared"],
    [{ scenario, seed: "abc" }, 'simulate({ seed }): "abc" is not "<master seed>/<schedule index>"'],
    [{ scenario, seed: "1" }, 'simulate({ seed }): "1" is not "<master seed>/<schedule index>"'],
    [{ scenario, horizon: "60" }, 'simulate({ horizon }): must be a positive number, not "60"'],
    // a fault of the right kind but the wrong shape would never strike, and the run would pass: refused
    [{ scenario, schedule: [{ kind: "crash", after: { verb: "create", plural: "configmaps", name: "w1-*" } }] },
      "simulate({ schedule }): fault 1 (crash): after.nth must be a whole number of at least 1, not undefined"],
    [{ scenario, schedule: [{ kind: "crash", before: { verb: "get", plural: "configmaps", name: "c", nth: "1" } }] },
      'simulate({ schedule }): fault 1 (crash): before.nth must be a whole number of at least 1, not "1"'],
    [{ scenario, schedule: [{ kind: "crash", after: "w1" }] },
      'simulate({ schedule }): fault 1 (crash): after must be a request as a report names it ({ verb, plural, name, nth'],
    [{ scenario, schedule: [{ kind: "recreate", after: { verb: "patch", plural: 3, name: "w1", nth: 1 } }] },
      "simulate({ schedule }): fault 1 (recreate): after.plural must be a string, not 3"],
    [{ scenario, schedule: [{ kind: "error", status: 404, verb: "create", plural: "configmaps", nth: 1 }] },
      "simulate({ schedule }): fault 1 (error): status must be one of 409, 429, 500, 503, not 404"],
    [{ scenario, schedule: [{ kind: "error", status: 500, verb: "create", plural: "configmaps", nth: 0 }] },
      "simulate({ schedule }): fault 1 (error): nth must be a whole number of at least 1, not 0"],
    [{ scenario, schedule: [{ kind: "timeout", verb: "get", plural: "configmaps", nth: 1.5 }] },
      "simulate({ schedule }): fault 1 (timeout): nth must be a whole number of at least 1, not 1.5"],
    [{ scenario, schedule: [{ kind: "delay", plural: "configmaps", ms: -5 }] },
      "simulate({ schedule }): fault 1 (delay): ms must be a positive number, not -5"],
    [{ scenario, schedule: [{ kind: "merge", plural: "widgets", step: 0 }] },
      "simulate({ schedule }): fault 1 (merge): step must be a whole number of at least 1, not 0"],
    [{ scenario, schedule: [{ kind: "expire", plural: "", step: 1 }] },
      'simulate({ schedule }): fault 1 (expire): plural must be a resource\'s plural, not ""'],
  ];
  for (const [options, message] of refusals) expect(() => checkOptions(options)).toThrow(message);
  const fine = { scenario, seed: 7, schedules: 3, once: ["a"], volatile: [], memo: () => ({}), shrink: false };
  expect(() => checkOptions(fine)).not.toThrow();
  const site = { verb: "get", plural: "configmaps", name: "", nth: 2 };
  const faults = [
    { kind: "crash", before: site }, { kind: "crash", after: { ...site, verb: "patch", subresource: "status" } },
    { kind: "delay", plural: "configmaps", ms: 150 }, { kind: "merge", plural: "widgets", step: 1 },
    { kind: "expire", plural: "widgets", step: 2 }, { kind: "error", status: 429, verb: "list", plural: "pods", nth: 1 },
    { kind: "recreate", after: site }, { kind: "lease", after: site }, { kind: "timeout", verb: "get", plural: "x", nth: 1 },
  ];
  expect(() => checkOptions({ scenario, schedule: faults })).not.toThrow();
});

test("simulate() refuses a misspelt option at once; a failing given schedule is replayed by its faults", async () => {
  const registry = new Registry();
  registry.on.create(Widgets, async ({ name, body, api }) => {    // a generated name: a second run makes a second
    await api.create({ ...adopt(configMap("", {}), { owner: body }), metadata: { generateName: `${name}-` } });
  }, { id: "leak" });
  const scenario = async (world: World) => { await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} }); };
  await expect(simulate({ registry, scenario, schedulse: 3 } as never)).rejects.toThrow('no option "schedulse"');
  const crash = { kind: "crash" as const, after: { verb: "create", plural: "configmaps", name: "w1-*", nth: 1 } };
  const failed = await simulate({ registry, scenario, schedule: [crash] }).catch((e: unknown) => e);
  expect(failed).toBeInstanceOf(SimulationFailure);
  const last = (failed as SimulationFailure).report.split("\n").at(-1);
  expect(last).toBe(`replay: simulate({ ...options, schedule: ${JSON.stringify([crash])} })`);
});

test("a bad seed, a lease fault outside lease mode, a bad KOBUN_SIMULATE_SCHEDULES: refused before the reference run", async () => {
  const registry = new Registry();
  registry.on.create(Widgets, () => {}, { id: "noop" });
  let runs = 0;
  const counted = async (world: World) => {
    runs++;
    await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
  };
  const lease = { kind: "lease" as const, after: { verb: "patch", plural: "widgets", name: "w1", nth: 1 } };
  await expect(simulate({ registry, scenario: counted, seed: "7" })).rejects.toThrow('"7" is not "<master seed>/<schedule index>"');
  await expect(simulate({ registry, scenario: counted, faults: { lease: true } })).rejects.toThrow("must run in lease mode");
  await expect(simulate({ registry, scenario: counted, schedule: [lease] })).rejects.toThrow("must run in lease mode");
  const before = process.env.KOBUN_SIMULATE_SCHEDULES;
  process.env.KOBUN_SIMULATE_SCHEDULES = "many";
  try {
    await expect(simulate({ registry, scenario: counted })).rejects.toThrow("KOBUN_SIMULATE_SCHEDULES must be a positive whole");
  } finally {
    if (before === undefined) delete process.env.KOBUN_SIMULATE_SCHEDULES;
    else process.env.KOBUN_SIMULATE_SCHEDULES = before;
  }
  expect(runs).toBe(0);
}, 30_000);

test("a simulation with no schedule to run fails, saying why, rather than passing having tested nothing", async () => {
  const registry = new Registry();
  registry.on.create(Widgets, () => {}, { id: "noop" });
  const applied = async (world: World) => { await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} }); };
  // a scenario that takes no step (a placeholder, or its steps made with another client) and an operator that writes
  // nothing: no fault has a point to strike at
  await expect(simulate({ registry, scenario: async () => {} }))
    .rejects.toThrow("simulate: no schedule to run: the fault-free run took 0 steps and the operator made 0 writes");
  const off = { crash: false, delay: false, merge: false, errors: false, expire: false, recreate: false };
  await expect(simulate({ registry, scenario: applied, faults: off }))
    .rejects.toThrow("simulate: no schedule to run: every kind of fault is off");
}, 30_000);
