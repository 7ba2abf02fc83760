// Reads never staler than our own writes (docs/reconcile.md, "Never staler than our own
// writes"): with the children's watch 3 s late, a child created, patched or deleted through
// ctx.api shows in ctx.cache at once, in the same call and the next one; with
// `reconcile.readOwnWrites: false` the cache is an informer's (a child just made is not there);
// and with the object's own watch late, a requeued reconcile runs on its last status write, not
// on the older version the watch still holds, and so does one woken by its child.

import { expect, test } from "bun:test";
import { adopt, Registry, resource, type ReconcileContext, type ReconcileResult, type TargetObject } from "kobun";
import { Calls, operate, Widgets } from "./kit.ts";

/** A reconcile that counts its runs in status.children, from the status it runs on; `seen` keeps what each saw. */
function counting(calls: Calls, seen: (number | undefined)[], then: (next: number) => ReconcileResult) {
  return (ctx: ReconcileContext<TargetObject<typeof Widgets>>): ReconcileResult => {
    seen.push(ctx.status?.children);
    calls.record(ctx);
    const next = (ctx.status?.children ?? 0) + 1;
    ctx.patch.status.children = next;
    return then(next);
  };
}

test("our own writes show in ctx.cache at once, in the call and the next, while the watch lags", async () => {
  const calls = new Calls();
  const views: Record<string, unknown>[] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    const call = calls.record(ctx);
    const name = `${ctx.name}-child`;
    const names = () => ctx.cache.list(resource.configmaps).map((c) => c.metadata.name);
    if (call === 0) {
      if (ctx.cache.get(resource.configmaps, name)) throw new Error("a child before any was made");
      await ctx.api.create(adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { v: "1" } }, { owner: ctx.body }));
      views.push({ call, afterCreate: names() });
      return { requeueAfter: 0.05 };
    }
    if (call === 1) {
      views.push({ call, listed: names(), data: ctx.cache.get(resource.configmaps, name)?.data });
      await ctx.api.patch(resource.configmaps, name, { data: { v: "2" } });
      views.push({ call, afterPatch: ctx.cache.get(resource.configmaps, name)?.data });
      return { requeueAfter: 0.05 };
    }
    if (call === 2) {
      views.push({ call, data: ctx.cache.get(resource.configmaps, name)?.data });
      await ctx.api.delete(resource.configmaps, name);
      views.push({ call, afterDelete: names() });
      return { requeueAfter: 0.05 };
    }
    if (call === 3) views.push({ call, listed: names() });
  }, { owns: [resource.configmaps] });
  await using kit = await operate(registry);
  kit.sandbox.faults.delayWatches(3000, { plural: "configmaps" });
  await kit.apply(Widgets, { metadata: { name: "s" }, spec: {} });
  await calls.until((c) => c.length >= 4, "four calls", 30_000);
  const quick = calls.all.slice(0, 4);
  // The four calls came faster than the watch could have told the cache any of it.
  expect((quick[3]!.at - quick[0]!.at) / 1000).toBeLessThan(3);
  expect(views).toEqual([
    { call: 0, afterCreate: ["s-child"] },
    { call: 1, listed: ["s-child"], data: { v: "1" } },
    { call: 1, afterPatch: { v: "2" } },
    { call: 2, data: { v: "2" } },
    { call: 2, afterDelete: [] },
    { call: 3, listed: [] },
  ]);
}, 60_000);

test("with readOwnWrites: false, a child just created is not in ctx.cache until the watch brings it", async () => {
  const listed: number[] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    const name = `${ctx.name}-child`;
    await ctx.api.create(adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name } }, { owner: ctx.body }));
    listed.push(ctx.cache.list(resource.configmaps).length);
    ctx.patch.status.ready = true;
  }, { owns: [resource.configmaps] });
  await using kit = await operate(registry, { reconcile: { readOwnWrites: false } });
  kit.sandbox.faults.delayWatches(3000, { plural: "configmaps" });
  await kit.apply(Widgets, { metadata: { name: "i" }, spec: {} });
  await kit.until(Widgets, "i", (o) => o.status?.ready);
  expect(listed[0]).toBe(0);
}, 60_000);

test("a requeued reconcile runs on its own last status write while the object's watch lags", async () => {
  const calls = new Calls();
  const seen: (number | undefined)[] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, counting(calls, seen, (next) => (next < 4 ? { requeueAfter: next === 1 ? 0.3 : 0.05 } : undefined)));
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "n" }, spec: {} });
  await calls.until((c) => c.length >= 1, "the first run");
  kit.sandbox.faults.delayWatches(3000, { plural: "widgets" }); // from here the watch shows no status write for 3 s
  await calls.until((c) => c.length >= 4, "four runs", 30_000);
  // Each run saw the count its predecessor wrote, sooner than the lagging watch could show it.
  expect(seen).toEqual([undefined, 1, 2, 3]);
  expect((calls.all[3]!.at - calls.all[1]!.at) / 1000).toBeLessThan(3);
}, 60_000);

test("a reconcile woken by its child runs on its own last status write while the object's watch lags", async () => {
  const calls = new Calls();
  const seen: (number | undefined)[] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, counting(calls, seen, () => undefined), { owns: [resource.configmaps] });
  await using kit = await operate(registry);
  const made = await kit.apply(Widgets, { metadata: { name: "k" }, spec: {} });
  await kit.until(Widgets, "k", (o) => o.status?.children === 1);
  kit.sandbox.faults.delayWatches(3000, { plural: "widgets" });
  const owner = { apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", name: "k", uid: made.metadata.uid!, controller: true };
  for (const round of ["1", "2"]) {
    await kit.apply(resource.configmaps, { metadata: { name: "k-child", ownerReferences: [owner] }, data: { round } });
    await calls.until((c) => c.length >= Number(round) + 1, `the wake of round ${round}`);
  }
  expect(seen).toEqual([undefined, 1, 2]);
}, 60_000);
