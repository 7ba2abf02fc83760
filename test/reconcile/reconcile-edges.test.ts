// on.reconcile at its edges: a wake while it runs runs it again; a spec change that our status
// write overtook is reconciled; `when` refusing an object under finalizer: true holds nothing; a
// requeue while deleting keeps the finalizer; ctx.deleting follows the deletion mark; on.event
// beside a reconcile hears only what happened to the object; a failed write is reconciled again.

import { afterEach, expect, test } from "bun:test";
import { Registry, type ReconcileContext } from "../../src/declaring/index.ts";
import type { KubeObject } from "../../src/kube/index.ts";
import { CONFIGMAPS, maybe, until, WIDGETS, widget, world, type World } from "./fixtures.ts";

let w: (World & { operate: (registry: Registry, file?: object) => Promise<void> }) | undefined;
afterEach(async () => {
  await w?.stop();
  w = undefined;
});

const byLabel = (cm: KubeObject) => (cm.metadata.labels?.widget ? { name: cm.metadata.labels.widget } : null);

test("a wake that comes while the reconcile runs runs it again", async () => {
  w = await world();
  const seen: number[] = [];
  const { promise: gate, resolve: release } = Promise.withResolvers<void>();
  const { promise: inFirst, resolve: entered } = Promise.withResolvers<void>();
  const { promise: cmSeen, resolve: sawCm } = Promise.withResolvers<void>();
  const registry = new Registry();
  // Its worker runs after the ConfigMap's event was accepted, and so after the wake it caused was queued.
  registry.on.event("configmaps", () => sawCm());
  registry.on.reconcile("widgets", async (ctx) => {
    seen.push(ctx.cache.list("configmaps").length);
    if (seen.length === 1) {
      entered();
      await gate;
    }
    ctx.patch.status.runs = seen.length;
  }, { watches: [{ resource: "configmaps", map: byLabel }] });
  await w.operate(registry);
  await w.client.create(WIDGETS, "default", widget("p"));
  await inFirst;
  await w.client.create(CONFIGMAPS, "default", { metadata: { name: "cm", labels: { widget: "p" } } });
  await cmSeen; // the wake is queued behind the running reconcile
  release();
  await until(() => seen, (s) => s.length >= 2 && s.at(-1) === 1, "a reconcile that sees the ConfigMap");
}, 30_000);

test("a spec change made while it runs is reconciled, though our status write came after it", async () => {
  w = await world();
  const generations: number[] = [];
  const registry = new Registry();
  registry.on.reconcile("widgets", async (ctx) => {
    generations.push(ctx.meta.generation!);
    if (generations.length === 1) await w!.client.patch(WIDGETS, "default", "q", { spec: { size: 2 } });
    ctx.patch.status.saw = ctx.meta.generation;
  });
  await w.operate(registry);
  await w.client.create(WIDGETS, "default", widget("q", { size: 1 }));
  await until(() => generations, (g) => g.includes(2), "generation 2 reconciled");
  const status = await until(async () => (await w!.client.get(WIDGETS, "default", "q")).status, (s) => s?.saw === 2, "its status");
  expect(status!.observedGeneration).toBe(2);
}, 30_000);

test("with finalizer: true, an object `when` refuses gets no finalizer and is deleted freely", async () => {
  w = await world();
  const registry = new Registry();
  registry.on.reconcile("widgets", () => {}, { finalizer: true, when: (ctx) => (ctx.spec as { on?: boolean }).on === true });
  await w.operate(registry);
  await w.client.create(WIDGETS, "default", widget("on", { on: true }));
  await w.client.create(WIDGETS, "default", widget("off", { on: false }));
  await until(async () => (await w!.client.get(WIDGETS, "default", "on")).metadata.finalizers, (f) => f?.length === 1, "the finalizer on the accepted one");
  expect((await w.client.get(WIDGETS, "default", "off")).metadata.finalizers).toBeUndefined();
  await w.client.delete(WIDGETS, "default", "off");
  await until(() => maybe(w!.client, WIDGETS, "off"), (o) => o === undefined, "the refused one gone");
}, 30_000);

test("a requeue while deleting keeps the finalizer until a reconcile returns without one; ctx.deleting is set", async () => {
  w = await world();
  const deleting: boolean[] = [];
  const registry = new Registry();
  registry.on.reconcile("widgets", (ctx: ReconcileContext) => {
    if (!ctx.meta.deletionTimestamp) return;
    deleting.push(ctx.deleting);
    return deleting.length < 3 ? { requeueAfter: 0.02 } : undefined;
  }, { finalizer: true });
  await w.operate(registry);
  await w.client.create(WIDGETS, "default", widget("slow"));
  await until(async () => (await w!.client.get(WIDGETS, "default", "slow")).metadata.finalizers, (f) => f?.length === 1, "the finalizer");
  await w.client.delete(WIDGETS, "default", "slow");
  await until(() => maybe(w!.client, WIDGETS, "slow"), (o) => o === undefined, "gone");
  expect(deleting).toEqual([true, true, true]);
}, 30_000);

test("on.event beside a reconcile hears the object's events, not its wakes or requeues", async () => {
  w = await world();
  const events: string[] = [];
  let runs = 0;
  const registry = new Registry();
  registry.on.event("widgets", (ctx) => void events.push(ctx.type));
  registry.on.reconcile("widgets", () => (++runs < 3 ? { requeueAfter: 0.02 } : undefined), {
    watches: [{ resource: "configmaps", map: byLabel }],
  });
  await w.operate(registry);
  await w.client.create(WIDGETS, "default", widget("e"));
  await until(() => runs, (n) => n === 3, "three reconciles");
  await w.client.create(CONFIGMAPS, "default", { metadata: { name: "cm-e", labels: { widget: "e" } } });
  await until(() => runs, (n) => n === 4, "the wake's reconcile");
  expect(events.length).toBe(1); // "added", or "listed" when it came before the first LIST ended
}, 30_000);

test("a reconcile whose write failed is reconciled again, and its status written", async () => {
  w = await world();
  let runs = 0;
  const registry = new Registry();
  registry.on.reconcile("widgets", (ctx) => {
    runs++;
    ctx.patch.status.ok = true;
  });
  w.sandbox.faults.failNext(1, 500, { verb: "patch", plural: "widgets" });
  await w.operate(registry);
  await w.client.create(WIDGETS, "default", widget("w"));
  await until(async () => (await w!.client.get(WIDGETS, "default", "w")).status, (s) => s?.ok === true, "the status written");
  expect(runs).toBe(2);
}, 30_000);

test("ctx.cache.list({ index }) gives the objects an index keeps under a key; an unknown index is an error", async () => {
  w = await world();
  const lists: string[][] = [];
  const registry = new Registry();
  registry.on.index("configmaps", function byWidget(ctx) {
    return ctx.labels.widget ? { [ctx.labels.widget]: true } : undefined;
  });
  registry.on.reconcile("widgets", (ctx) => {
    lists.push(ctx.cache.list("configmaps", { index: { id: "byWidget", key: ctx.name } }).map((o: KubeObject) => o.metadata.name!).sort());
    if (ctx.name === "unknown") ctx.cache.list("configmaps", { index: { id: "nope", key: "x" } });
  }, { watches: [{ resource: "configmaps", map: byLabel }] });
  await w.operate(registry);
  await w.client.create(CONFIGMAPS, "default", { metadata: { name: "one", labels: { widget: "i" } } });
  await w.client.create(CONFIGMAPS, "default", { metadata: { name: "two", labels: { widget: "i" } } });
  await w.client.create(CONFIGMAPS, "default", { metadata: { name: "other", labels: { widget: "j" } } });
  await w.client.create(WIDGETS, "default", widget("i"));
  await until(() => lists, (l) => l.some((names) => names.join() === "one,two"), "the indexed ConfigMaps");
  await w.client.create(WIDGETS, "default", widget("unknown"));
  await until(() => w!.lines.find((l) => l.includes('no index \\"nope\\" of that resource') || l.includes('no index "nope" of that resource')), Boolean, "the error");
}, 30_000);

test("at start-up a reconcile runs only once what it owns has listed: its cache shows the children already there", async () => {
  w = await world();
  await w.client.create(WIDGETS, "default", widget("p"));
  await w.client.create(CONFIGMAPS, "default", { metadata: { name: "p-child", labels: { widget: "p" } } });
  // The ConfigMaps' first LIST answers late: a reconcile run before it would read an empty cache (as a
  // restarted operator's did: a child made again under a generated name, found by simulate()).
  w.sandbox.faults.stallNext(1, 500, { verb: "list", plural: "configmaps" });
  const seen: number[] = [];
  const registry = new Registry();
  registry.on.reconcile("widgets", (ctx) => {
    seen.push(ctx.cache.list("configmaps").length);
  }, { watches: [{ resource: "configmaps", map: byLabel }] });
  await w.operate(registry);
  await until(() => seen, (s) => s.length >= 1, "the first reconcile");
  expect(seen[0]).toBe(1);
}, 30_000);
