// Class: a crash between two writes leaves a half state. The buggy operator makes a Widget's two
// ConfigMaps with generated names in one create handler; killed after the first, it runs again on
// restart and makes both again: three children where there should be two. The fix names them.

import { expect, test } from "bun:test";
import { adopt, Registry } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.create(Widgets, async ({ name, body, api }) => {
    for (const part of ["config", "secret-ref"]) {
      if (fixed) {
        await api.apply(adopt(configMap(`${name}-${part}`, { part }), { owner: body }));
      } else {
        const child = { ...configMap("", { part }), metadata: { generateName: `${name}-${part}-` } };
        await api.create(adopt(child, { owner: body }));
      }
    }
  }, { id: "children" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 1 } });
};

test("buggy: a crash between two generated-name creates leaks a child", async () => {
  const { failure: found, shrunk } = await failureOf(simulate({ registry: operator(false), scenario }));
  expect(found.check).toBe("convergence");
  expect(found.details).toContain("~ configmaps default/w1-config-*: 2 objects where the reference has 1");
  expect(shrunk).toEqual([{ kind: "crash", after: { verb: "create", plural: "configmaps", name: "w1-config-*", nth: 1 } }]);
}, 60_000);

test("fixed: named children survive every crash point", async () => {
  const result = await simulate({ registry: operator(true), scenario });
  expect(result.runs.every((run) => run.ok)).toBe(true);
}, 60_000);
