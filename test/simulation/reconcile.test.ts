// Class: a crash between two writes leaves a half state, in the level-triggered style
// (on.reconcile). The buggy reconcile makes both children only when the first is missing: killed
// between the two creates, the restarted operator finds the first and never makes the second. The
// fix checks each child on its own, as a reconcile must.

import { expect, test } from "bun:test";
import { adopt, Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import { configMap, failureOf, Widgets } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.reconcile(Widgets, async ({ name, body, api, cache }) => {
    const [config, secondary] = [`${name}-config`, `${name}-secondary`];
    const has = (child: string) => cache.get(resource.configmaps, child) !== undefined;
    if (fixed) {
      if (!has(config)) await api.create(adopt(configMap(config), { owner: body }));
      if (!has(secondary)) await api.create(adopt(configMap(secondary), { owner: body }));
    } else if (!has(config)) {
      await api.create(adopt(configMap(config), { owner: body }));
      await api.create(adopt(configMap(secondary), { owner: body }));
    }
  }, { owns: [resource.configmaps] });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
};

const invariants = {
  "a Widget has both children": async (world: World) => {
    const names = (await world.list(resource.configmaps)).map((c) => c.metadata.name);
    return (names.includes("w1-config") === names.includes("w1-secondary")) || `the ConfigMaps are ${names}`;
  },
};

test("buggy: a reconcile that makes both children only with the first leaves a half state", async () => {
  const { failure: found, shrunk } = await failureOf(simulate({ registry: operator(false), scenario, invariants }));
  expect(found.message).toContain('invariant "a Widget has both children" broken');
  expect(shrunk).toEqual([{ kind: "crash", after: { verb: "create", plural: "configmaps", name: "w1-config", nth: 1 } }]);
}, 60_000);

test("fixed: a reconcile that checks each child makes what is missing", async () => {
  await simulate({ registry: operator(true), scenario, invariants });
}, 90_000);
