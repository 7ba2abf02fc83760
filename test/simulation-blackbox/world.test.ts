// docs/testing.md, "The scenario and the checks", "Time, and settling" and "The faults", the
// parts an author meets beside the checks: applyAll is one step; each run settles before its first
// step (a startup handler's virtual sleep done); a failed handler is retried after 1 virtual second
// within the step; an on.event handler that ignores `listed` objects is found by the relist the
// expire fault forces (or a crash), where on.reconcile passes; lease mode adds the lease fault; an
// apply of an object the scenario deleted waits for it to go, so it is made anew under any fault.

import { expect, test } from "bun:test";
import { adopt, now, Registry, sleep } from "kobun";
import { simulate, type World } from "kobun/testing";
import { configMap, failureOf, Gadgets } from "./helpers.ts";

test("applyAll is one step; a run settles before its first step, startup's virtual sleep included", async () => {
  const registry = new Registry();
  registry.on.startup(async ({ memo }) => { await sleep(30); memo.ready = true; });   // 30 virtual seconds
  registry.on.create(Gadgets, ({ memo }) => ({ ready: memo.ready === true }), { id: "made" });
  const steps: number[] = [];
  const started = performance.now();
  await simulate({
    registry, schedules: 2,
    scenario: async (world) => {
      steps.push(world.step);
      await world.applyAll(Gadgets, [1, 2, 3].map((n) => ({ metadata: { name: `g${n}` }, spec: {} })));
      steps.push(world.step);
      const made = (await world.list(Gadgets)).map((g) => (g.status as { made?: { ready: boolean } })?.made?.ready);
      expect(made).toEqual([true, true, true]);
    },
  });
  expect(steps.slice(0, 2)).toEqual([0, 1]);
  expect(performance.now() - started).toBeLessThan(30_000);   // three runs, each past a 30 s sleep: no real wait
}, 60_000);

test("a failing handler is retried after 1 virtual second, within the step", async () => {
  const registry = new Registry();
  const at: number[] = [];
  registry.on.create(Gadgets, () => {
    at.push(now().getTime());
    if (at.length % 2 === 1) throw new Error("the first try of each run fails");
    return "ok";
  }, { id: "flaky" });
  const after: unknown[] = [];
  await simulate({
    registry, schedule: [],
    scenario: async (world) => {
      await world.apply(Gadgets, { metadata: { name: "g1" }, spec: {} });
      after.push(((await world.get(Gadgets, "g1"))?.status as Record<string, unknown> | undefined)?.flaky);
    },
  });
  expect(after).toEqual(["ok", "ok"]);                         // the reference run and the given one
  expect([at[1]! - at[0]!, at[3]! - at[2]!]).toEqual([1000, 1000]);
}, 60_000);

function copier(level: boolean): Registry {
  const registry = new Registry();
  if (level) {
    registry.on.reconcile(Gadgets, async ({ name, body, api }) => {
      await api.apply(adopt(configMap(`${name}-copy`), { owner: body }));
    });
    return registry;
  }
  registry.on.event(Gadgets, async ({ type, name, body, api }) => {
    if (type !== "added") return;                               // the bug: a `listed` Gadget is new to it too
    await api.apply(adopt(configMap(`${name}-copy`), { owner: body }));
  });
  return registry;
}
const two = async (world: World) => {
  await world.apply(Gadgets, { metadata: { name: "g1" }, spec: {} });
  await world.apply(Gadgets, { metadata: { name: "g2" }, spec: {} });
};

test("an on.event handler that ignores listed objects loses a Gadget to a relist; on.reconcile does not", async () => {
  const { failure, shrunk, report } = await failureOf(simulate({ registry: copier(false), scenario: two }));
  expect(shrunk.length, report).toBe(1);
  expect(["crash", "expire"]).toContain(shrunk[0]!.kind);
  expect(failure.details.join("\n")).toMatch(/- configmaps default\/g[12]-copy: missing \(the reference run has it\)/);
  const expired = await failureOf(simulate({ registry: copier(false), scenario: two, faults: { crash: false } }));
  expect(expired.shrunk, expired.report).toEqual([{ kind: "expire", plural: "gadgets", step: 1 }]);
  expect(expired.report).toContain("then its watches expired (410): the operator relists");
  await simulate({ registry: copier(true), scenario: two });
}, 60_000);

test("lease mode: the lease fault is on, and a Lease taken mid-run is survived by a level-triggered operator", async () => {
  const off = { crash: false, delay: false, merge: false, errors: false, expire: false, recreate: false };
  const config = { peering: { mode: "lease" } };
  const result = await simulate({ registry: copier(true), scenario: two, config, faults: off, schedules: 2 });
  expect(result.runs.map((run) => run.faults.map((fault) => fault.kind))).toEqual([["lease"], ["lease"]]);
  expect(result.runs.every((run) => run.ok)).toBe(true);
}, 60_000);

test("an apply of a Gadget the scenario deleted waits for it to go, as kubectl delete does: made anew under a merge", async () => {
  const registry = new Registry();
  registry.on.reconcile(Gadgets, async ({ name, body, deleting, api }) => {
    if (!deleting) await api.apply(adopt(configMap(`${name}-copy`), { owner: body }));
  }, { finalizer: true });                                     // the deletion waits for the operator to see it
  const remade: boolean[] = [];
  const g1 = { metadata: { name: "g1" }, spec: {} };
  const scenario = async (world: World) => {
    const first = await world.apply(Gadgets, g1);
    await world.delete(Gadgets, "g1");
    const again = await world.apply(Gadgets, g1);              // without a wait: a patch of the Gadget being deleted
    remade.push(again.metadata.uid !== first.metadata.uid && !again.metadata.deletionTimestamp);
  };
  for (const kind of ["merge", "expire"] as const) {           // both hold the deletion back over steps 2-3
    const result = await simulate({ registry, scenario, schedule: [{ kind, plural: "gadgets", step: 2 }] });
    expect(result.runs.map((run) => run.ok)).toEqual([true]);
  }
  expect(remade).toEqual([true, true, true, true]);            // each reference run, and each faulted one
}, 60_000);

test("a re-creation waits for the deleted Gadget when its namespace is named at the delete only, or at the apply only", async () => {
  const registry = new Registry();
  registry.on.reconcile(Gadgets, async ({ name, body, deleting, api }) => {
    if (!deleting) await api.apply(adopt(configMap(`${name}-copy`), { owner: body }));
  }, { finalizer: true });
  const remade: boolean[] = [];
  const scenario = async (world: World) => {
    const first = await world.apply(Gadgets, { metadata: { name: "g1" }, spec: {} });
    await world.delete(Gadgets, "g1", { namespace: "default" }); // the run's namespace, named here only
    const again = await world.apply(Gadgets, { metadata: { name: "g1" }, spec: {} });
    await world.delete(Gadgets, "g1");
    const third = await world.apply(Gadgets, { metadata: { name: "g1", namespace: "default" }, spec: {} }); // here only
    remade.push(third.metadata.uid !== again.metadata.uid && !third.metadata.deletionTimestamp);
    remade.push(again.metadata.uid !== first.metadata.uid && !again.metadata.deletionTimestamp);
  };
  for (const step of [2, 4]) {                                 // a merge over each delete and the apply after it
    const result = await simulate({ registry, scenario, schedule: [{ kind: "merge", plural: "gadgets", step }] });
    expect(result.runs.map((run) => run.ok)).toEqual([true]);
  }
  expect(remade).toEqual(Array(8).fill(true));                 // each reference run, and each faulted one
}, 60_000);
