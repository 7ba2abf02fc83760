// Class: delete-and-recreate name confusion. The operator provisions each Widget once (a costly
// outside step; here its ConfigMap) and remembers in memory which Widgets it has provisioned, by
// name, forgetting a name when it sees that Widget's deletion event. When the deletion and the
// re-creation under the same name reach it through a relist (the expire fault: a 410, then the new
// Widget listed and, at the relist's end, the old one's deletion found), the new Widget is
// reconciled while its name is still remembered and skipped; the old one's deletion then forgets
// the name, too late: the new Widget is never provisioned (the old one's ConfigMap went with it,
// by the garbage collector). The fix remembers Widgets by uid.

import { expect, test } from "bun:test";
import { adopt, Registry } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  // the operator's memo is made afresh by each instance: a crash forgets it, which is only safe
  registry.on.startup(({ memo }) => {
    memo.provisioned = new Set<string>();
  });
  registry.on.event(Widgets, ({ type, name, uid, memo }) => {
    if (type === "deleted") (memo.provisioned as Set<string>).delete(fixed ? uid : name);
  }, { id: "forget" });
  registry.on.reconcile(Widgets, async ({ name, uid, body, api, memo }) => {
    const provisioned = memo.provisioned as Set<string>;
    const key = fixed ? uid : name;
    if (provisioned.has(key)) return;
    await api.apply(adopt(configMap(`${name}-data`), { owner: body }));
    provisioned.add(key);
  }, { id: "provision" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
  await world.delete(Widgets, "w1");
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 2 } });
};

test("buggy: a Widget remembered by name passes for the one recreated under its name", async () => {
  const { failure: found, shrunk } = await failureOf(simulate({ registry: operator(false), scenario }));
  expect(found.check).toBe("convergence");
  expect(found.details).toContain("- configmaps default/w1-data: missing (the reference run has it)");
  expect(shrunk).toEqual([{ kind: "expire", plural: "widgets", step: 2 }]);
}, 60_000);

test("fixed: a Widget remembered by uid is a new one when made again", async () => {
  const result = await simulate({ registry: operator(true), scenario });
  expect(result.runs.every((run) => run.ok)).toBe(true);
}, 60_000);
