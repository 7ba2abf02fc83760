// docs/testing.md, simulate()'s options table and what it says of seeds, budgets and the faults:
// each option does what the table says, bad ones are refused before anything runs with a message
// that names them, and the exploration is a function of the seed.

import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { adopt, now, Registry, resource } from "kobun";
import { simulate, type Fault, type World } from "kobun/testing";
import { configMap, Gadgets, refusal } from "./helpers.ts";

function operator(): Registry {
  const registry = new Registry();
  registry.on.reconcile(Gadgets, async ({ name, body, spec, api, patch }) => {
    await api.apply(adopt(configMap(`${name}-data`, { size: String(spec.size) }), { owner: body }));
    patch.status.ready = true;                                    // a write on the scenario's object: recreate's point
  });
  return registry;
}
const scenario = async (world: World) => {
  await world.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 1 } });
  await world.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 2 } });
};
const kindsOf = (runs: { faults: Fault[] }[]) => new Set<string>(runs.flatMap((run) => run.faults.map((f) => f.kind)));

const budget = process.env.KOBUN_SIMULATE_SCHEDULES;
afterEach(() => {
  if (budget === undefined) delete process.env.KOBUN_SIMULATE_SCHEDULES;
  else process.env.KOBUN_SIMULATE_SCHEDULES = budget;
});

test("bad options are refused, each naming what is wrong", async () => {
  const registry = operator();
  const refused = (options: object) => refusal(simulate({ registry, scenario, ...options } as never));
  expect(await refused({ schedulse: 200 })).toStartWith('simulate: no option "schedulse" (the options: scenario,');
  expect(await refused({ faults: { crashes: true } })).toStartWith('simulate({ faults }): no fault kind "crashes"');
  expect(await refused({ faults: { lease: true } })).toContain('the operator must run in lease mode: config: { peering: { mode: "lease" } }');
  const leaseFault = { kind: "lease", after: { verb: "patch", plural: "gadgets", subresource: "status", name: "g1", nth: 1 } };
  expect(await refused({ schedule: [leaseFault] })).toBe('simulate({ schedule: [{ kind: "lease", ... }] }): ' +
    'the operator must run in lease mode: config: { peering: { mode: "lease" } }');
  expect(await refused({ schedules: 0 })).toBe("simulate({ schedules }): must be a whole number of at least 1, not 0");
  expect(await refused({ seed: "seven" })).toBe('simulate({ seed }): "seven" is not "<master seed>/<schedule index>"');
  expect(await refused({ horizon: 0 })).toBe("simulate({ horizon }): must be a positive number, not 0");
  expect(await refused({ maxFirings: -1 })).toBe("simulate({ maxFirings }): must be a positive number, not -1");
  expect(await refused({ settleTimeout: "5s" })).toBe("simulate({ settleTimeout }): must be a positive number, not \"5s\"");
  expect(await refused({ schedule: [{ kind: "crash", afer: {} }] })).toStartWith("simulate({ schedule }): fault 1 (crash) lacks after|before");
  expect(await refused({ crds: ["no/such.crd.yaml"] })).toContain("no/such.crd.yaml");
  process.env.KOBUN_SIMULATE_SCHEDULES = "0";
  expect(await refused({})).toBe('simulate: KOBUN_SIMULATE_SCHEDULES must be a positive whole number, not "0"');
}, 60_000);

test("the budget: 16 by default, KOBUN_SIMULATE_SCHEDULES when set, `schedules` over both; seeds \"<master>/<index>\"", async () => {
  const registry = operator();
  const byDefault = await simulate({ registry, scenario });
  expect(byDefault.runs.length).toBe(16);
  process.env.KOBUN_SIMULATE_SCHEDULES = "3";
  const fromEnv = await simulate({ registry, scenario, seed: 7 });
  expect(fromEnv.runs.map((run) => run.seed)).toEqual(["7/0", "7/1", "7/2"]);
  const own = await simulate({ registry, scenario, schedules: 2 });
  expect(own.runs.length).toBe(2);
  // the systematic schedules come first, the same whatever the seed
  expect(fromEnv.runs.map((run) => run.faults)).toEqual(byDefault.runs.slice(0, 3).map((run) => run.faults));
  expect(byDefault.runs[0]!.faults).toEqual([{ kind: "crash", after: expect.objectContaining({ nth: 1 }) }]);
  expect(byDefault.crashPoints).toBeGreaterThanOrEqual(2);
  // the same seed names the same schedule: replaying one by its seed runs that one only, the same faults
  const one = await simulate({ registry, scenario, seed: "1/15" });
  expect(one.runs).toEqual([expect.objectContaining({ seed: "1/15", faults: byDefault.runs[15]!.faults, ok: true })]);
}, 60_000);

test("faults: each kind switched off is never injected; timeout only when asked", async () => {
  const registry = operator();
  const mild = await simulate({ registry, scenario, faults: { crash: false, errors: false, delay: false } });
  expect([...kindsOf(mild.runs)].sort()).toEqual(["expire", "merge", "recreate"]);
  const all = await simulate({ registry, scenario, schedules: 24 });
  expect(kindsOf(all.runs).has("timeout")).toBe(false);         // off by default
  expect(kindsOf(all.runs).has("lease")).toBe(false);           // not in lease mode
  for (const kind of ["crash", "delay", "merge", "error", "expire", "recreate"]) expect(kindsOf(all.runs)).toContain(kind);
  const off = { crash: false, delay: false, merge: false, errors: false, expire: false, recreate: false };
  const timeout = await simulate({ registry, scenario, faults: { ...off, timeout: true }, schedules: 1 });
  expect(timeout.runs.map((run) => run.faults.map((fault) => fault.kind))).toEqual([["timeout"]]);
}, 60_000);

test("horizon: a requeue within it plays out as the step settles; one beyond it waits for world.advance", async () => {
  let start = 0;
  const runs: string[] = [];
  const registry = new Registry();
  registry.on.reconcile(Gadgets, () => {
    runs.push(`run at ${(now().getTime() - start) / 1000} s`);
    return { requeueAfter: 30 };
  });
  const watched = (label: string) => async (world: World) => {
    start = now().getTime();
    await world.apply(Gadgets, { metadata: { name: "g1" }, spec: {} });
    runs.push(`${label}: applied`);
    await world.advance(30);
    runs.push(`${label}: advanced 30 s`);
  };
  await simulate({ registry, scenario: watched("horizon 60"), schedule: [] });
  expect(runs.slice(0, 5)).toEqual([                            // the reference run
    "run at 0 s", "run at 30 s", "run at 60 s", "horizon 60: applied", "run at 90 s",
  ]);
  runs.length = 0;
  await simulate({ registry, scenario: watched("horizon 10"), schedule: [], horizon: 10 });
  expect(runs.slice(0, 4)).toEqual(["run at 0 s", "horizon 10: applied", "run at 30 s", "horizon 10: advanced 30 s"]);
}, 60_000);

test("memo: a function makes it afresh for each instance (a crash starts a second); an object is copied for each", async () => {
  const seen: number[] = [];
  const registry = new Registry();
  registry.on.create(Gadgets, ({ memo }) => { seen.push((memo.handled as number)++); }, { id: "count" });
  // killed as kobun records the handler's success: the handler has run, and runs again in a new instance
  const killed: Fault[] = [{
    kind: "crash", before: { verb: "patch", plural: "gadgets", subresource: "status", name: "g1", nth: 1 },
  }];
  const one = async (world: World) => { await world.apply(Gadgets, { metadata: { name: "g1" }, spec: {} }); };
  await simulate({ registry, scenario: one, schedule: killed, memo: () => ({ handled: 0 }) });
  expect(seen).toEqual([0, 0, 0]);                               // the reference's instance, then two instances'
  seen.length = 0;
  const mine = { handled: 0 };
  await simulate({ registry, scenario: one, schedule: killed, memo: mine });
  expect(seen).toEqual([0, 0, 0]);
  expect(mine.handled).toBe(0);                                   // the test's object is not the instances'
}, 60_000);

test("namespace and crds: the operator watches the namespace given, for a resource whose CRD is a YAML file", async () => {
  const crd = join(import.meta.dir, "..", "..", "handlers", "kobunexample.crd.yaml");   // not made by defineResource
  const registry = new Registry();
  registry.on.create("kobunexamples.kobun.dev/v1", async ({ name, namespace, api }) => {
    await api.apply({ ...configMap(`${name}-copy`), metadata: { name: `${name}-copy`, namespace } });
  }, { id: "copy" });
  const where: string[] = [];
  await simulate({
    registry, crds: [crd], namespace: "team-a", schedules: 2,
    scenario: async (world) => {
      await world.apply("kobunexamples.kobun.dev/v1", { metadata: { name: "n1" } });
      where.push(...(await world.list(resource.configmaps)).map((c) => `${c.metadata.namespace}/${c.metadata.name}`));
    },
  });
  expect(where).toContain("team-a/n1-copy");
}, 60_000);
