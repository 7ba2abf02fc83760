// `volatile` paths, as docs/testing.md gives them: dotted, `*` for any key or element, wherever
// it stands. A `*` at the end (`metadata.annotations.*`: every annotation) left everything in the
// comparison before, so a test that declared a whole map volatile still failed on it.

import { expect, test } from "bun:test";
import { adopt, Registry } from "kobun";
import { simulate, type World } from "kobun/testing";
import { withoutPaths } from "../../src/testing/simulate-checks.ts";
import { configMap, Widgets } from "./widgets.ts";

test("a `*` at the end of a path leaves out every key of a map and every element of an array", () => {
  const object = {
    metadata: { annotations: { "example.com/at": "1", b: "2" }, labels: { app: "w" } },
    status: { ports: [1, 2], conditions: [{ type: "Ready", at: "t" }] },
  };
  expect(withoutPaths(object, ["metadata.annotations.*", "status.ports.*", "status.conditions.*.at"])).toEqual({
    metadata: { annotations: {}, labels: { app: "w" } },
    status: { ports: [], conditions: [{ type: "Ready" }] },
  });
  expect(object.metadata.annotations).toEqual({ "example.com/at": "1", b: "2" });   // a copy: the input is kept
});

test("volatile: metadata.annotations.* lets a stamp that differs run to run pass", async () => {
  const registry = new Registry();
  registry.on.create(Widgets, async ({ name, body, api }) => {
    const child = configMap(`${name}-data`);
    const stamped = { ...child, metadata: { ...child.metadata, annotations: { "example.com/at": `${Math.random()}` } } };
    await api.apply(adopt(stamped, { owner: body }));
  }, { id: "stamp" });
  const scenario = async (world: World) => { await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} }); };
  const result = await simulate({ registry, scenario, schedules: 2, volatile: ["metadata.annotations.*"] });
  expect(result.runs.map((run) => run.ok)).toEqual([true, true]);
}, 60_000);
