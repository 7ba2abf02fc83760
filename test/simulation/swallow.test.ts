// Class: a failed request taken for success (Acto's misoperations). The buggy create handler
// ignores every error of its child's create, meaning to ignore AlreadyExists only: a 500 (or a
// conflict) on that create leaves the Widget without its child for good. The fix ignores 409
// AlreadyExists only, and lets every other error retry the handler.

import { expect, test } from "bun:test";
import { adopt, ApiError, Registry } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.create(Widgets, async ({ name, body, api }) => {
    await api.create(adopt(configMap(`${name}-data`), { owner: body })).catch((error: unknown) => {
      if (!fixed) return; // "it exists already": but that is only one of the errors
      if (error instanceof ApiError && error.code === 409 && error.reason === "AlreadyExists") return;
      throw error;
    });
  }, { id: "data" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
};

test("buggy: a swallowed error on the child's create leaves the Widget without it", async () => {
  const options = { registry: operator(false), scenario, faults: { crash: false, delay: false, merge: false } };
  const { failure: found, shrunk } = await failureOf(simulate(options));
  expect(found.details.join("\n")).toContain("configmaps default/w1-data: missing");
  expect(shrunk).toEqual([expect.objectContaining({ kind: "error", verb: "create", plural: "configmaps" })]);
}, 60_000);

test("fixed: only AlreadyExists is taken for done", async () => {
  await simulate({ registry: operator(true), scenario });
}, 90_000);
