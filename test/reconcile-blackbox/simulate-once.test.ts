// simulate()'s `once` (docs/testing.md, "The scenario and the checks"): it names handlers by cause
// that promise to run once. Before, an id that named no handler (a typo), or an on.reconcile's
// (which runs again on every trigger by design, and is never checked), passed every schedule
// without a word: a check that could never fail. Now both are refused before anything runs; a
// sub-handler's qualified id (`create_fn/b`) is taken; an on.event handler's (it runs on every event) is refused.

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets } from "./kit.ts";

const scenario = async (world: World) => { await world.apply(Widgets, { metadata: { name: "w1" }, spec: { size: 1 } }); };

function operator(): Registry {
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => { ctx.patch.status.ready = true; }, { id: "readiness" });
  return registry;
}

test("once: a reconcile's id, or one that names no handler, is refused, naming the handlers' ids", async () => {
  const registry = operator();
  registry.on.event(Widgets, () => {}, { id: "audit" });
  await expect(simulate({ registry, scenario, once: ["readiness"] })).rejects.toThrow(
    `simulate({ once }): "readiness" is an on.reconcile, which runs again on every trigger by design`,
  );
  await expect(simulate({ registry, scenario, once: ["audit"] })).rejects.toThrow(
    `simulate({ once }): "audit" is an on.event handler, which runs on every event by design`,
  );
  registry.on.create(Widgets, () => {}, { id: "create_fn" });
  await expect(simulate({ registry, scenario, once: ["craete_fn"] })).rejects.toThrow(
    `simulate({ once }): no handler has the id "craete_fn" (the handlers' ids: "create_fn")`,
  );
  await expect(simulate({ registry: operator(), scenario, once: ["x"] })).rejects.toThrow(
    `no handler has the id "x" (the handlers' ids: none)`,
  );
}, 60_000);

test("once: a sub-handler's qualified id is taken", async () => {
  const registry = new Registry();
  registry.on.create(Widgets, async (ctx) => {
    for (const part of ["a", "b"]) await ctx.subhandler(part, () => {});
  }, { id: "create_fn" });
  const result = await simulate({ registry, scenario, once: ["create_fn/b", "create_fn"], schedules: 2 });
  expect(result.runs.map((run) => run.ok)).toEqual([true, true]);
}, 60_000);
