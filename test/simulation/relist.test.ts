// Faults: a 410 that forces a relist, and a crash as a request arrives (before it is served).
// Class: edge-triggered logic. The buggy operator mirrors each Widget's spec.replicas into a
// ConfigMap from on.event, creating it on `added` and patching it on `modified`: it ignores
// `listed`. An object it first learns of by a relist, after a 410 or after a restart, never gets
// its ConfigMap or its change: the watches expired over two steps (the operator relists and sees
// w1 as `listed`), or the operator killed as its create of the ConfigMap reaches the API server
// (the create never made: the next instance lists w1). Neither a crash after any write nor a
// merge finds it. The fix is level-triggered: a reconcile applies the ConfigMap, whatever the
// event, and is retried when its write fails (an on.event handler is not: an error on its write
// would leave the mirror stale too).

import { expect, test } from "bun:test";
import { ApiError, Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

const mirrorOf = (name: string, replicas = 0) => configMap(`${name}-mirror`, { replicas: String(replicas) });

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  if (fixed) {
    // level-triggered, and retried when a write fails (an on.event handler is not)
    registry.on.reconcile(Widgets, async ({ name, body, api }) => {
      await api.apply(mirrorOf(name, body.spec.replicas));
    });
    return registry;
  }
  registry.on.event(Widgets, async ({ type, name, body, api }) => {
    const mirror = mirrorOf(name, body.spec.replicas);
    if (type === "added") await api.create(mirror);
    if (type === "modified") {
      await api.patch(resource.configmaps, mirror.metadata.name, { data: mirror.data }).catch((error: unknown) => {
        if (!(error instanceof ApiError && error.code === 404)) throw error;
      });
    }
  }, { id: "mirror" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 1 } });
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 2 } });
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 3 } });
};

const only = (kind: string) => ({
  crash: false, delay: false, merge: false, errors: false, expire: false, recreate: false, [kind]: true,
});

test("buggy: after a 410 the relist shows w1 as listed, which the edge-triggered handler ignores", async () => {
  const { failure: found, shrunk, report } = await failureOf(
    simulate({ registry: operator(false), scenario, faults: only("expire") }));
  expect(found.check).toBe("convergence");
  expect(shrunk).toEqual([{ kind: "expire", plural: "widgets", step: 1 }]);
  expect(report).toContain("the watches of widgets expire (410 Gone)");
  expect(report).toContain("events of widgets held over steps 1-2, then its watches expired (410)");
}, 60_000);

test("buggy: killed as its create of the mirror arrives, the next instance lists w1 and ignores it", async () => {
  const { failure: found, shrunk, report } = await failureOf(
    simulate({ registry: operator(false), scenario, faults: only("crash") }));
  expect(found.check).toBe("convergence");
  expect(found.details.join("\n")).toContain("configmaps default/w1-mirror");
  // before its create of the mirror, or (when that run's restart raced the step) before its patch of it
  expect(shrunk).toEqual([{ kind: "crash", before: expect.objectContaining({ plural: "configmaps" }) }]);
  expect(report).toContain("killed as it arrives (never served)");
}, 60_000);

test("buggy, merge only: the merged event is a `modified`, which it handles (no merge finds this one)", async () => {
  const result = await simulate({ registry: operator(false), scenario, faults: only("merge") });
  expect(result.runs.length).toBeGreaterThan(0);
}, 60_000);

test("fixed: a reconcile applies the mirror, under every kind of fault that applies", async () => {
  const result = await simulate({ registry: operator(true), scenario });
  const kinds = new Set(result.runs.flatMap((run) => run.faults.map((fault) => fault.kind)));
  // no recreate: this reconcile writes nothing on a Widget, so no write of it concerns one
  expect([...kinds].sort()).toEqual(["crash", "delay", "error", "expire", "merge"]);
  expect(result.runs.some((run) => run.faults.some((fault) => fault.kind === "crash" && "before" in fault))).toBe(true);
}, 90_000);
