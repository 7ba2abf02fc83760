// What it owns and watches (docs/reconcile.md, "What runs it"): a change of a child whose
// controller ownerReference names a reconciled object runs that object's reconcile, but not when
// the reference's uid is an older object's of the same name; a watched object runs the reconciles
// its `map` names; a `map` that throws is logged and wakes nothing; a relist of the children wakes
// their owners; a map may read the cache (its second argument).

import { expect, test } from "bun:test";
import { adopt, Registry, resource, type ReconcileContext, type TargetObject } from "kobun";
import { Calls, operate, Widgets } from "./kit.ts";

/** A reconcile that creates its widget's ConfigMap `<name>-child` when the cache has none. */
function ensureChild(calls: Calls) {
  return async (ctx: ReconcileContext<TargetObject<typeof Widgets>>) => {
    calls.record(ctx);
    const name = `${ctx.name}-child`;
    if (!ctx.cache.get(resource.configmaps, name)) {
      await ctx.api.create(adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name } }, { owner: ctx.body }));
    }
  };
}

test("an owned child's change and deletion run its owner; a child of a gone owner of the same name does not", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, ensureChild(calls), { owns: [resource.configmaps] });
  await using kit = await operate(registry, { workers: { batchWindow: 0 } });
  const first = await kit.apply(Widgets, { metadata: { name: "o" }, spec: {} });
  const child = await kit.until(resource.configmaps, "o-child", (c) => c.metadata.ownerReferences?.length);
  expect(child.metadata.ownerReferences?.[0]).toMatchObject({ kind: "Widget", uid: first.metadata.uid, controller: true });
  const before = calls.all.length;
  await kit.apply(resource.configmaps, { metadata: { name: "o-child" }, data: { touched: "yes" } });
  await calls.until((c) => c.length > before, "the owner's run after its child changed");
  await kit.delete(resource.configmaps, "o-child");
  const again = await kit.until(resource.configmaps, "o-child", (c) => c.metadata.uid !== child.metadata.uid);
  // A child naming an older widget "o" by uid: made by hand, its changes wake the new "o" never. (A second,
  // living owner keeps the garbage collector from deleting it: its deletion would wake "o", recreated.test.ts.)
  const anchor = await kit.apply(resource.configmaps, { metadata: { name: "anchor" } });
  const orphan = await kit.apply(resource.configmaps, {
    metadata: {
      name: "stale-child",
      ownerReferences: [
        { apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", name: "o", uid: "0000-old", controller: true },
        { apiVersion: "v1", kind: "ConfigMap", name: "anchor", uid: anchor.metadata.uid! },
      ],
    },
  });
  expect(orphan.metadata.name).toBe("stale-child");
  const settled = calls.all.length;
  await kit.apply(resource.configmaps, { metadata: { name: "stale-child", ownerReferences: orphan.metadata.ownerReferences }, data: { x: "1" } });
  await kit.consistently(resource.configmaps, "o-child", (c) => c?.metadata.uid === again.metadata.uid, { for: 500 });
  expect(calls.all.length).toBe(settled);
}, 60_000);

test("a child that leaves its owner (its reference removed, or moved to another) runs the owner it left", async () => {
  const calls = new Calls();
  /** Each run's view of its child: the uid of the owner the cache shows it under ("" for none). */
  const seen: string[] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    const child = ctx.cache.get(resource.configmaps, `${ctx.name}-child`);
    if (child) seen.push(`${ctx.name}: ${child.metadata.ownerReferences?.[0]?.uid ?? ""}`);
    await ensureChild(calls)(ctx);
  }, { owns: [resource.configmaps] });
  await using kit = await operate(registry, { workers: { batchWindow: 0 } });
  const o = await kit.apply(Widgets, { metadata: { name: "o" }, spec: {} });
  await kit.apply(Widgets, { metadata: { name: "p" }, spec: {} });
  for (const name of ["o-child", "p-child"]) await kit.until(resource.configmaps, name, (c) => c.metadata.ownerReferences?.length);
  const patch = async (widget: string, metadata: object) => {
    const url = `${kit.sandbox.url}/api/v1/namespaces/default/configmaps/${widget}-child`;
    const body = JSON.stringify({ metadata });
    const answer = await fetch(url, { method: "PATCH", headers: { "content-type": "application/merge-patch+json" }, body });
    expect(answer.status).toBe(200);
  };
  // Only a run after the change can see it: none comes unless the owner it left is woken.
  await patch("o", { ownerReferences: null }); // orphaned by hand, as `kubectl patch` would
  await calls.until(() => seen.includes("o: "), "o's run after its child left it");
  const toO = { apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", name: "o", uid: o.metadata.uid!, controller: true };
  await patch("p", { ownerReferences: [toO] }); // p's child moved to o
  await calls.until(() => seen.includes(`p: ${o.metadata.uid}`), "p's run after its child moved to o");
}, 60_000);

test("watches: map names the objects to run; a map that throws is logged and wakes nothing", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => void calls.record(ctx), {
    watches: [{
      resource: resource.configmaps,
      map: (cm) => {
        if (cm.metadata.name === "bad") throw new Error("cannot map bad");
        return (cm.metadata.annotations?.apps ?? "").split(",").filter(Boolean).map((name: string) => ({ name }));
      },
    }],
  });
  await using kit = await operate(registry, { workers: { batchWindow: 0 } });
  for (const name of ["x", "y", "z"]) await kit.apply(Widgets, { metadata: { name }, spec: {} });
  await calls.until((c) => c.length >= 3, "the three first runs");
  await kit.apply(resource.configmaps, { metadata: { name: "settings", annotations: { apps: "x,z" } } });
  await calls.until((c) => c.filter((x) => x.name === "x").length >= 2 && c.filter((x) => x.name === "z").length >= 2,
    "x and z run again");
  await kit.apply(resource.configmaps, { metadata: { name: "bad", annotations: { apps: "y" } } });
  await kit.logs.until(/cannot map bad|watches map failed/);
  // y was named by nobody that mapped: settings again, now naming y, is its first wake.
  await kit.apply(resource.configmaps, { metadata: { name: "settings", annotations: { apps: "y" } } });
  await calls.until((c) => c.filter((x) => x.name === "y").length >= 2, "y's wake");
  expect(calls.of("y").length).toBe(2);
}, 60_000);

test("a relist of an owned resource wakes the owners its objects name", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, ensureChild(calls), { owns: [resource.configmaps] });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "l" }, spec: {} });
  await kit.until(resource.configmaps, "l-child", (c) => c.metadata.ownerReferences?.length);
  const before = calls.all.length;
  kit.sandbox.faults.compact();
  kit.sandbox.faults.expireWatches({ plural: "configmaps" });
  await calls.until((c) => c.length > before, "the wake by the relisted child");
}, 60_000);

test("watches: a map may look the reconciled objects up in the cache (its second argument)", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => void calls.record(ctx), {
    watches: [{
      resource: resource.secrets,
      map: (secret, { cache }) => cache.list(Widgets).filter((widget) => widget.spec?.note === secret.metadata.name)
        .map((widget) => ({ name: widget.metadata.name! })),
    }],
  });
  await using kit = await operate(registry, { workers: { batchWindow: 0 } });
  for (const [name, note] of [["a", "s1"], ["b", "s2"], ["c", "s1"]]) {
    await kit.apply(Widgets, { metadata: { name }, spec: { note } });
  }
  await calls.until((c) => c.length >= 3, "the three first runs");
  await kit.apply(resource.secrets, { metadata: { name: "s1" }, stringData: { key: "v" } });
  await calls.until((c) => calls.of("a").length >= 2 && calls.of("c").length >= 2, "a and c, which name s1");
  await kit.apply(resource.secrets, { metadata: { name: "s2" }, stringData: { key: "v" } });
  await calls.until(() => calls.of("b").length >= 2, "b, which names s2");
  expect([calls.of("a").length, calls.of("c").length]).toEqual([2, 2]);
}, 60_000);
