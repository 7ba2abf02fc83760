// Class: edge-triggered logic misses an intermediate state. The buggy operator makes a Widget's
// ConfigMap when the Widget is created and repairs it only on the edge: when it sees the
// ConfigMap's deletion event. If the ConfigMap's creation and its deletion (by a user, or a
// cleanup job) reach the operator merged (the merge fault: made and gone unseen, as after a
// relist), no deletion is ever seen, and the Widget stays without it for good, whatever
// happens to the Widget later. The fix is level-triggered: an `on.reconcile` that applies the
// ConfigMap on every trigger (its own deletion, or any later change of the Widget) repairs it.

import { expect, test } from "bun:test";
import { adopt, ApiError, Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  if (fixed) {
    registry.on.reconcile(Widgets, async ({ name, body, api }) => {
      await api.apply(adopt(configMap(`${name}-data`), { owner: body }));
    }, { id: "data", owns: [resource.configmaps] });
    return registry;
  }
  registry.on.create(Widgets, async ({ name, body, api }) => {
    await api.apply(adopt(configMap(`${name}-data`), { owner: body }));
  }, { id: "data" });
  registry.on.event(resource.configmaps, async ({ type, body, api }) => {
    const { ownerReferences } = body.metadata as { ownerReferences?: { kind: string; name: string; uid: string }[] };
    const owner = ownerReferences?.find((ref) => ref.kind === "Widget");
    if (type !== "deleted" || owner === undefined) return;
    const widget = await api.get(Widgets, owner.name).catch((error: unknown) => {
      if (error instanceof ApiError && error.code === 404) return undefined;
      throw error;
    });
    if (widget === undefined || widget.metadata.uid !== owner.uid || widget.metadata.deletionTimestamp) return; // gone
    await api.apply(adopt(configMap(`${owner.name}-data`), { owner: widget }));
  }, { id: "repair" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
  // a user deletes the ConfigMap; should a fault have kept the operator from making it yet, the user
  // applies w1 unchanged instead (a step all the same, so that the steps keep their numbers)
  if (await world.get(resource.configmaps, "w1-data")) await world.delete(resource.configmaps, "w1-data");
  else await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 2 } });
};

test("buggy: a repair on the child's deletion event misses a deletion merged with its creation", async () => {
  const { failure: found, shrunk } = await failureOf(simulate({ registry: operator(false), scenario }));
  expect(found.check).toBe("convergence");
  expect(found.details).toContain("- configmaps default/w1-data: missing (the reference run has it)");
  expect(shrunk).toEqual([{ kind: "merge", plural: "configmaps", step: 1 }]);
}, 60_000);

test("fixed: a reconcile applies the child on every trigger", async () => {
  const result = await simulate({ registry: operator(true), scenario });
  expect(result.runs.every((run) => run.ok)).toBe(true);
}, 60_000);
