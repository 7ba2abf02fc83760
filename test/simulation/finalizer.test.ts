// Class: a finalizer never released after a crash in the delete handler. The buggy delete handler
// deletes the Widget's ConfigMap and fails on NotFound: killed after the deletion, the restarted
// operator's handler finds the ConfigMap gone and throws on every retry, for ever: the Widget is
// never released (the run never settles). The fix treats "already gone" as done.

import { expect, test } from "bun:test";
import { adopt, ApiError, Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.create(Widgets, async ({ name, body, api }) => {
    await api.apply(adopt(configMap(`${name}-data`), { owner: body }));
  }, { id: "data" });
  registry.on.delete(Widgets, async ({ name, api }) => {
    await api.delete(resource.configmaps, `${name}-data`).catch((error: unknown) => {
      if (fixed && error instanceof ApiError && error.code === 404) return;
      throw error;
    });
  }, { id: "cleanup" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
  await world.delete(Widgets, "w1");
};

test("buggy: a crash in the delete handler leaves the Widget held by its finalizer", async () => {
  // a run that does not settle in 2.5 s fails: kobun would retry this handler for ever
  const simulation = simulate({ registry: operator(false), scenario, settleTimeout: 2500 });
  const { failure: found, shrunk } = await failureOf(simulation);
  // kobun retries the handler for ever: the run never settles, or settles between two retries, the Widget held
  expect(["settle", "deletion"]).toContain(found.check);
  expect(found.details.join("\n")).toContain("kobun.dev/finalizer");
  expect(shrunk).toEqual([expect.objectContaining({ kind: "crash", after: expect.objectContaining({ verb: "delete" }) })]);
}, 60_000);

test("fixed: a delete handler that finds its child gone is done", async () => {
  await simulate({ registry: operator(true), scenario });
}, 90_000);
