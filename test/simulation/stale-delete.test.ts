// Class: a stale read deletes the wrong object. On a Widget's creation the operator applies its
// child ConfigMap (named after the Widget), then tidies up: a ConfigMap of that name that an
// index of the ConfigMaps shows owned by another uid is the leftover of an earlier Widget of the
// name, which it deletes by name rather than wait for the garbage collector. When the Widget is
// deleted and made again while the ConfigMaps' watch lags (the merge fault holds their events from
// step 2, the deletion, through the settling of step 3), the index still shows the old child, by
// then collected; the delete by name hits the new child the handler has just applied, and the new
// Widget is left without one. (An index makes no promise about the operator's own writes; nor does
// on.reconcile's ctx.cache about the garbage collector's.) The fix decides the delete from what the
// API server says the name holds now (since the apply, this Widget's child), not from the index.

import { expect, test } from "bun:test";
import { adopt, ApiError, Registry, type Index } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

type Owned = { metadata: { ownerReferences?: { uid: string }[] } };
/** a child is this Widget's when one of its owner references names the Widget's uid (apply adds ours to a leftover) */
const ownedBy = (object: Owned, uid: string) => (object.metadata.ownerReferences ?? []).some((o) => o.uid === uid);

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.index("configmaps", ({ name, body }) => ({ [name]: body as Owned }), { id: "byName" });
  registry.on.create(Widgets, async ({ name, body, api, indexes }) => {
    const child = `${name}-data`;
    await api.apply(adopt(configMap(child, { replicas: String(body.spec.replicas ?? 1) }), { owner: body }));
    const seen = (indexes.byName as Index<Owned, string>).get(child);
    if (seen.every((object) => ownedBy(object, body.metadata.uid!))) return;
    if (fixed) {
      const now = await api.get("configmaps", child).catch((error: unknown) => {
        if (error instanceof ApiError && error.code === 404) return undefined;
        throw error;
      });
      if (!now || ownedBy(now as Owned, body.metadata.uid!)) return;
    }
    await api.delete("configmaps", child).catch((error: unknown) => {
      if (!(error instanceof ApiError && error.code === 404)) throw error;
    });
  }, { id: "child" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 1 } });
  await world.delete(Widgets, "w1");
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 2 } });
};

test("buggy: a leftover seen in a lagging index is deleted by name, and the new child with it", async () => {
  const { failure: found, shrunk } = await failureOf(simulate({ registry: operator(false), scenario }));
  expect(found.check).toBe("convergence");
  expect(found.details).toContain("- configmaps default/w1-data: missing (the reference run has it)");
  expect(shrunk).toEqual([{ kind: "merge", plural: "configmaps", step: 2 }]);
}, 60_000);

test("fixed: the API server, not the index, says what the name holds before it is deleted", async () => {
  await simulate({ registry: operator(true), scenario }); // rejects with a SimulationFailure if any schedule fails
}, 60_000);
