// Class: a stale read within one step (the `delay` fault). The buggy create handler looks its
// child up in an index of ConfigMaps, makes one with a generated name when the index names none,
// and retries a moment later (TemporaryError, 0.1 s) to see it listed. Events of ConfigMaps that
// reach the operator 300 ms late leave the index empty at the retries, which make a second and a
// third child. A one-step scenario has no `merge` to find it (a merge spans two steps): `delay`
// does. The fix names the child and applies it: one object whatever the index shows.

import { expect, test } from "bun:test";
import { adopt, Registry, TemporaryError, type Index } from "kobun";
import { simulate, type World } from "kobun/testing";
import { configMap, failureOf, indexChildrenByOwner, Widgets } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  indexChildrenByOwner(registry);
  registry.on.create(Widgets, async ({ name, body, api, indexes }) => {
    if ((indexes.childrenByOwner as Index<string, string>).get(body.metadata.uid!).length > 0) return;
    if (fixed) {
      await api.apply(adopt(configMap(`${name}-data`), { owner: body }));
    } else {
      await api.create(adopt({ ...configMap(""), metadata: { generateName: `${name}-data-` } }, { owner: body }));
    }
    throw new TemporaryError("waiting for the child to be listed", { delay: 0.1 });
  }, { id: "child" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
};

test("buggy: a retry that reads a lagging index makes the child again", async () => {
  const { failure: found, shrunk, report } = await failureOf(simulate({ registry: operator(false), scenario }));
  expect(found.check).toBe("convergence");
  expect(found.details).toEqual(["~ configmaps default/w1-data-*: 3 objects where the reference has 1"]);
  expect(shrunk, report).toEqual([{ kind: "delay", plural: "configmaps", ms: 300 }]);
}, 60_000);

test("fixed: a named child, applied, is one object whatever the index shows", async () => {
  const result = await simulate({ registry: operator(true), scenario });
  expect(result.runs.every((run) => run.ok)).toBe(true);
}, 60_000);
