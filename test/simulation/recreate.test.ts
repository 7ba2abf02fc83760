// Class: delete-and-recreate name confusion. The operator remembers its children by name, in an
// index of the ConfigMaps it watches, and skips making a Widget's child when one of that name is
// already there. When a Widget is deleted and made again under the same name while the old
// child's deletion (by the garbage collector) has not reached the operator yet, the old child
// passes for the new Widget's: the new Widget is left without one. The fix takes a child for the
// Widget's only when it is owned by this Widget's uid, not just named after it.

import { expect, test } from "bun:test";
import { adopt, Registry, type Index } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.index("configmaps", ({ name, body }) => {
    const owner = (body.metadata as { ownerReferences?: { uid: string }[] }).ownerReferences?.[0];
    return owner ? { [name]: owner.uid } : undefined;
  }, { id: "childOwners" });
  registry.on.create(Widgets, async ({ name, body, api, indexes }) => {
    const owners = (indexes.childOwners as Index<string, string>).get(`${name}-data`);
    const made = fixed ? owners.includes(body.metadata.uid!) : owners.length > 0;
    if (!made) await api.create(adopt(configMap(`${name}-data`), { owner: body }));
  }, { id: "data" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
  await world.delete(Widgets, "w1");
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 2 } });
};

test("buggy: a child remembered by name passes for the recreated Widget's", async () => {
  const { failure: found, shrunk } = await failureOf(simulate({ registry: operator(false), scenario }));
  expect(found.check).toBe("convergence");
  expect(found.details).toContain("- configmaps default/w1-data: missing (the reference run has it)");
  expect(shrunk).toEqual([{ kind: "merge", plural: "configmaps", step: 2 }]);
}, 60_000);

test("fixed: a child counts only when this Widget's uid owns it", async () => {
  const result = await simulate({ registry: operator(true), scenario });
  expect(result.runs.every((run) => run.ok)).toBe(true);
}, 60_000);
