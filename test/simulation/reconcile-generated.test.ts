// Class: a non-idempotent create, in a reconcile. The buggy `on.reconcile` makes a Widget's store
// (a ConfigMap with a generated name) unless the Widget's status names one, and records its name
// there: in `ctx.patch.status`, written after the reconcile returns. Killed right after the
// create, before that status write, the operator restarts, reconciles the Widget again (every
// object is reconciled at start-up), finds no name in the status and makes a second store. The
// fix takes the world for the record: a store is looked for among the ConfigMaps the Widget owns
// (asked of the API server) before one is made.

import { expect, test } from "bun:test";
import { adopt, Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.reconcile(Widgets, async ({ name, uid, body, status, api, patch }) => {
    const owned = async () => (await api.list(resource.configmaps, { labelSelector: `widget=${name}` }))
      .find((c) => c.metadata.ownerReferences?.some((ref) => ref.uid === uid));
    const recorded = fixed ? (await owned())?.metadata.name : status?.store;
    if (typeof recorded === "string") {
      patch.status.store = recorded;
      return;
    }
    const store = { ...configMap(""), metadata: { generateName: `${name}-store-`, labels: { widget: name } } };
    const made = await api.create(adopt(store, { owner: body }));
    patch.status.store = made.metadata.name;
  }, { id: "store" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
};

const volatile = ["status.store"]; // a generated name

test("buggy: a store recorded only in the status is made again after a crash", async () => {
  const { failure: found, shrunk } = await failureOf(simulate({ registry: operator(false), scenario, volatile }));
  expect(found.check).toBe("convergence");
  expect(found.details).toContain("~ configmaps default/w1-store-*: 2 objects where the reference has 1");
  expect(shrunk).toEqual([{ kind: "crash", after: { verb: "create", plural: "configmaps", name: "w1-store-*", nth: 1 } }]);
}, 60_000);

test("fixed: a store found among the Widget's ConfigMaps is not made again", async () => {
  const result = await simulate({ registry: operator(true), scenario, volatile });
  expect(result.runs.every((run) => run.ok)).toBe(true);
}, 60_000);
