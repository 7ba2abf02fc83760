// Class: edge-triggered logic misses an intermediate state. The buggy field handler acts on the
// transition Pending → Running only; when the operator sees only the latest state (Pending → Done,
// the Running in between merged away, as after a relist), it never notes the start. The fix is
// level-triggered: whatever the transition, a phase past Pending means the Widget started.

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.field(Widgets, { field: "spec.phase", id: "started" }, ({ old, new: now, body, patch }) => {
    const started = fixed
      ? (now === "Running" || now === "Done") && !body.status?.note
      : old === "Pending" && now === "Running";
    if (started) patch.status.note = "started";
  });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { phase: "Pending" } });
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { phase: "Running" } });
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { phase: "Done" } });
};

test("buggy: an edge-triggered handler misses Running when only the latest state is seen", async () => {
  const { failure: found, shrunk, report } = await failureOf(simulate({ registry: operator(false), scenario }));
  expect(found.check).toBe("convergence");
  expect(found.details.join("\n")).toContain("status.note");
  // steps 1-2 merged, the handler sees a creation in Running; steps 2-3, a change from Pending to Done
  expect(shrunk, report).toEqual([expect.objectContaining({ kind: "merge", plural: "widgets" })]);
}, 60_000);

test("fixed: a level-triggered handler notes the start from any later phase", async () => {
  await simulate({ registry: operator(true), scenario });
}, 90_000);
