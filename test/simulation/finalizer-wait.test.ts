// Class: a finalizer never released after a crash. The buggy reconcile (`finalizer: true`), when
// its Widget is deleted, deletes the Widget's ConfigMap and holds the Widget until it has seen
// that ConfigMap's deletion event, which an `on.event` handler notes in the operator's memory.
// Killed right after the deletion, the operator restarts with an empty memory, and the event it
// waits for will never come (the ConfigMap is already gone when the new instance lists): it
// holds the Widget for good, retrying. (A merge of the ConfigMap's creation and deletion loses
// the event as well.) The fix asks the world, not the memory of an event: the ConfigMap absent
// from the cache (never staler than the operator's own writes) is gone.

import { expect, test } from "bun:test";
import { adopt, ApiError, Registry, resource, TemporaryError } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.startup(({ memo }) => {
    memo.gone = new Set<string>(); // made afresh by each instance: a crash forgets it
  });
  registry.on.event(resource.configmaps, ({ type, name, memo }) => {
    if (type === "deleted") (memo.gone as Set<string>).add(name);
  }, { id: "note" });
  registry.on.reconcile(Widgets, async ({ name, body, api, cache, deleting, memo }) => {
    const child = `${name}-data`;
    if (!deleting) {
      await api.apply(adopt(configMap(child), { owner: body }));
      return;
    }
    const gone = fixed ? cache.get(resource.configmaps, child) === undefined : (memo.gone as Set<string>).has(child);
    if (gone) return; // returning releases the finalizer
    await api.delete(resource.configmaps, child).catch((error: unknown) => {
      if (!(error instanceof ApiError && error.code === 404)) throw error;
    });
    throw new TemporaryError(`waiting for ${child} to go`, { delay: 0.1 });
  }, { id: "data", finalizer: true, owns: [resource.configmaps] });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
  await world.delete(Widgets, "w1");
};

test("buggy: a deletion that waits for an event lost in a crash holds the Widget for good", async () => {
  // a run that does not settle in 2.5 s fails: kobun would retry this reconcile for ever
  const simulation = simulate({ registry: operator(false), scenario, settleTimeout: 2500 });
  const { failure: found, shrunk } = await failureOf(simulation);
  // it retries for ever: the run never settles, or settles between two retries with the Widget held
  expect(["settle", "deletion"]).toContain(found.check);
  expect(found.details.join("\n")).toContain('widgets default/w1 is still being deleted, held by the finalizers ["kobun.dev/finalizer"]');
  // the event is lost to a crash right after the deletion (found first, unless the machine is so slow that this run
  // passes by chance), or to a merge of the ConfigMap's creation and deletion
  const lost: unknown[] = [
    [{ kind: "crash", after: { verb: "delete", plural: "configmaps", name: "w1-data", nth: 1 } }],
    [{ kind: "merge", plural: "configmaps", step: 1 }],
  ];
  expect(lost).toContainEqual(shrunk);
}, 60_000);

test("fixed: a ConfigMap absent from the cache is gone, whoever saw it go", async () => {
  const result = await simulate({ registry: operator(true), scenario });
  expect(result.runs.every((run) => run.ok)).toBe(true);
}, 60_000);
