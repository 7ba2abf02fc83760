// Class: a stale read duplicates an object. The operator keeps a Widget's child ConfigMap, made
// with a generated name, and finds it again in an index of the ConfigMaps it watches (by owner
// uid): on a change of the Widget it updates the child the index names, and makes one when the
// index names none. An index follows the watch; when the ConfigMaps' watch lags across a step (the
// merge fault holds their events from step 1 through the settling of step 2), the update handler
// does not see the child its create handler made and makes a second one. (on.reconcile's ctx.cache
// would show it: reads there are never staler than the operator's own writes, reconcile.readOwnWrites;
// an index makes no such promise.) The fix names the child after its Widget and writes it with
// server-side apply, which makes or updates that one object whatever the index shows.

import { expect, test } from "bun:test";
import { adopt, Registry, type HandlerContext, type Index, type TargetObject } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf, indexChildrenByOwner } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  indexChildrenByOwner(registry);
  const ensureChild = async ({ name, body, api, indexes }: HandlerContext<TargetObject<typeof Widgets>>) => {
    const data = { replicas: String(body.spec.replicas ?? 1) };
    if (fixed) {
      await api.apply(adopt(configMap(`${name}-data`, data), { owner: body }));
      return;
    }
    const known = (indexes.childrenByOwner as Index<string, string>).get(body.metadata.uid!);
    for (const child of known) await api.patch("configmaps", child, { data });
    if (known.length === 0) {
      const child = { ...configMap("", data), metadata: { generateName: `${name}-data-` } };
      await api.create(adopt(child, { owner: body }));
    }
  };
  registry.on.create(Widgets, ensureChild, { id: "made" });
  registry.on.update(Widgets, ensureChild, { id: "updated" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 1 } });
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 2 } });
};

test("buggy: a child looked up in a lagging index is made twice", async () => {
  const { failure: found, shrunk } = await failureOf(simulate({ registry: operator(false), scenario }));
  expect(found.check).toBe("convergence");
  expect(found.details).toContain("~ configmaps default/w1-data-*: 2 objects where the reference has 1");
  expect(shrunk).toEqual([{ kind: "merge", plural: "configmaps", step: 1 }]);
}, 60_000);

test("fixed: a child named after its Widget and applied is one object whatever the index shows", async () => {
  await simulate({ registry: operator(true), scenario }); // rejects with a SimulationFailure if any schedule fails
}, 60_000);
