// Class: an unbounded retry storm. The buggy reconcile keeps controller-runtime's "expectations"
// (as the ReplicaSet controller does): before it creates the Widget's ConfigMap it notes, in the
// Widget's memo, that one is on its way, and while it is expected and not yet in the cache it
// looks again at once (`requeueAfter: 0.01`, no backoff). When that create fails (a 500 or a 409
// answered instead), the expectation is never lowered: the ConfigMap will never come, and the
// reconcile requeues itself a hundred times a second for good. The fix lowers the expectation
// when the create fails (the failure then retries with kobun's backoff) and waits a real second.

import { expect, test } from "bun:test";
import { adopt, Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.reconcile(Widgets, async ({ name, body, api, cache, memo }) => {
    const child = `${name}-data`;
    if (cache.get(resource.configmaps, child)) {
      memo.expecting = false; // observed: the expectation is met
      return;
    }
    if (memo.expecting) return { requeueAfter: fixed ? 1 : 0.01 }; // on its way: look again
    memo.expecting = true;
    await api.create(adopt(configMap(child), { owner: body })).catch((error: unknown) => {
      if (fixed) memo.expecting = false; // it is not on its way after all
      throw error;
    });
  }, { id: "data", owns: [resource.configmaps] });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
};

test("buggy: a reconcile expecting a child whose create failed requeues itself for good", async () => {
  // a run that does not settle in 2.5 s fails: the requeues never stop
  const simulation = simulate({ registry: operator(false), scenario, settleTimeout: 2500 });
  const { failure: found, shrunk } = await failureOf(simulation);
  expect(found.check).toBe("settle");
  expect(shrunk).toEqual([expect.objectContaining({ kind: "error", verb: "create", plural: "configmaps", nth: 1 })]);
}, 60_000);

test("fixed: a failed create lowers the expectation, and the wait is a real one", async () => {
  const result = await simulate({ registry: operator(true), scenario });
  expect(result.runs.every((run) => run.ok)).toBe(true);
}, 60_000);
