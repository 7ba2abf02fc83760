// status.observedGeneration, which an on.reconcile's status write carries, is compared as it stands
// to metadata.generation (itself volatile): a Widget deleted and made anew by the recreate fault
// counts its generations afresh, so a reconcile that has seen every change of it must not fail
// convergence for a number that only says "up to date" differently; one left behind still does.

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { simulate, type Fault, type World } from "kobun/testing";
import { failureOf, Widgets } from "./widgets.ts";

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 1 } });
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 2 } });
};
// the second status write (generation 2 in the reference) is followed by a recreate: generation 1
const recreate: Fault[] = [{ kind: "recreate", after: { verb: "patch", plural: "widgets", subresource: "status", name: "w1", nth: 2 } }];

test("a reconcile up to date with a recreated Widget passes, its observedGeneration 1 where the reference's is 2", async () => {
  const registry = new Registry();
  registry.on.reconcile(Widgets, ({ spec, patch }) => { patch.status.phase = `size ${spec.replicas}`; });
  const result = await simulate({ registry, scenario, schedule: recreate });
  expect(result.runs.map((run) => run.ok)).toEqual([true]);
});

test("a status left a generation behind is still a difference, told against the generation", async () => {
  // notes the generation it was created at, never the later ones: in the reference, one behind
  const registry = new Registry();
  registry.on.create(Widgets, ({ patch, body }) => {
    (patch.status as Record<string, unknown>).observedGeneration = body.metadata.generation;
  }, { id: "first" });
  // both steps merged: it first sees the Widget at generation 2, and is up to date by chance
  const merged = await failureOf(simulate({ registry, scenario, schedule: [{ kind: "merge", plural: "widgets", step: 1 }] }));
  expect(merged.failure.details).toEqual([
    `~ widgets default/w1: status.observedGeneration: "metadata.generation - 1" in the reference, "metadata.generation" here`,
  ]);
});
