// on.reconcile against the sandbox, through run(): a Widget owns a ConfigMap it creates; a
// deleted child is made again (owns), a watched object maps to its widget (watches), status is
// written with observedGeneration and does not run it again, requeueAfter and errors run it again
// (controller-runtime's backoff, ctx.retry), a PermanentError waits for the next change, the
// finalizer holds the object until a reconcile succeeds while deleting, and a resource both
// reconciled and handled by cause is refused.

import { afterEach, expect, test } from "bun:test";
import { PermanentError, Registry, type ReconcileContext } from "../../src/declaring/index.ts";
import type { KubeObject } from "../../src/kube/index.ts";
import { CONFIGMAPS, maybe, ownedChild, until, WIDGETS, widget, world, type World } from "./fixtures.ts";

let w: (World & { operate: (registry: Registry, file?: object) => Promise<void> }) | undefined;
afterEach(async () => {
  await w?.stop();
  w = undefined;
});

/** The reconcile of the tests: a ConfigMap named after the widget, owned by it; ready in its status. */
async function ensureChild(ctx: ReconcileContext): Promise<void> {
  const child = ctx.cache.get("configmaps", `${ctx.name}-child`);
  if (!child) {
    await ctx.api.create(ownedChild(ctx, { size: String((ctx.spec as { size?: number }).size ?? 0) }));
  }
  ctx.patch.status.ready = true;
}

test("a widget's child is created, made again when deleted, and the status says ready with observedGeneration", async () => {
  w = await world();
  const registry = new Registry();
  registry.on.reconcile("widgets.test.kobun.dev", ensureChild, { owns: ["configmaps"] });
  await w.operate(registry);
  await w.client.create(WIDGETS, "default", widget("a", { size: 3 }));
  const child = await until(() => maybe(w!.client, CONFIGMAPS, "a-child"), (c) => c !== undefined, "the child");
  expect(child!.data).toEqual({ size: "3" });
  const status = await until(async () => (await w!.client.get(WIDGETS, "default", "a")).status, (s) => s?.ready === true, "ready");
  expect(status!.observedGeneration).toBe(1);
  await w.client.delete(CONFIGMAPS, "default", "a-child");
  const again = await until(() => maybe(w!.client, CONFIGMAPS, "a-child"), (c) => c !== undefined && c.metadata.uid !== child!.metadata.uid, "the child made again");
  expect(again!.metadata.ownerReferences?.[0]?.name).toBe("a");
}, 30_000);

test("a status change alone does not run it; a label does; a watched object wakes the widget it maps to", async () => {
  w = await world();
  const seen: string[] = [];
  const registry = new Registry();
  registry.on.reconcile("widgets.test.kobun.dev", (ctx) => {
    seen.push(`${ctx.name}:${ctx.labels.color ?? "-"}`);
  }, { watches: [{ resource: "configmaps", map: (cm: KubeObject) => (cm.metadata.labels?.widget ? { name: cm.metadata.labels.widget } : null) }] });
  await w.operate(registry);
  await w.client.create(WIDGETS, "default", widget("b"));
  await until(() => seen.length, (n) => n === 1, "the first reconcile");
  await w.client.patch(WIDGETS, "default", "b", { status: { outside: true } }, { subresource: "status" });
  await w.client.patch(WIDGETS, "default", "b", { metadata: { labels: { color: "red" } } });
  await until(() => seen.length, (n) => n === 2, "the label's reconcile");
  expect(seen).toEqual(["b:-", "b:red"]); // the status change ran nothing
  await w.client.create(CONFIGMAPS, "default", { metadata: { name: "settings", labels: { widget: "b" } } });
  await until(() => seen.length, (n) => n === 3, "the watched ConfigMap's wake");
  await w.client.create(CONFIGMAPS, "default", { metadata: { name: "unrelated" } });
  await w.client.patch(WIDGETS, "default", "b", { metadata: { labels: { color: "blue" } } });
  await until(() => seen.length, (n) => n === 4, "the next label's reconcile");
  expect(seen).toEqual(["b:-", "b:red", "b:red", "b:blue"]); // the unrelated ConfigMap woke nothing
}, 30_000);

test("requeueAfter runs it again; errors retry with a growing backoff and ctx.retry; a PermanentError waits for a change", async () => {
  w = await world();
  const calls: { name: string; retry: number; at: number }[] = [];
  const registry = new Registry();
  registry.on.reconcile("widgets", (ctx) => {
    calls.push({ name: ctx.name, retry: ctx.retry, at: performance.now() });
    const mine = calls.filter((c) => c.name === ctx.name).length;
    if (ctx.name === "requeued") return mine < 3 ? { requeueAfter: 0.05 } : undefined;
    if (ctx.name === "flaky" && mine < 4) throw new Error(`not yet (${mine})`);
    if (ctx.name === "broken") throw new PermanentError("never");
  });
  await w.operate(registry, { reconcile: { backoff: { initial: 0.02, max: 1 } } });
  for (const name of ["requeued", "flaky", "broken"]) await w.client.create(WIDGETS, "default", widget(name));
  const of = (name: string) => calls.filter((c) => c.name === name);
  await until(() => of("requeued").length, (n) => n === 3, "three calls of the requeued widget");
  await until(() => of("flaky").length, (n) => n === 4, "four calls of the flaky widget");
  expect(of("flaky").map((c) => c.retry)).toEqual([0, 1, 2, 3]);
  const gaps = of("flaky").slice(1).map((c, i) => c.at - of("flaky")[i]!.at);
  expect(gaps[0]!).toBeGreaterThanOrEqual(15); // 20 ms, 40 ms, 80 ms: doubling (lower bounds only)
  expect(gaps[2]!).toBeGreaterThanOrEqual(60);
  await until(() => w!.lines.some((l) => l.includes("Reconcile 'reconcile widgets' failed permanently: never")), Boolean, "the permanent failure logged");
  expect(of("broken").length).toBe(1);
  await w.client.patch(WIDGETS, "default", "broken", { metadata: { labels: { fixed: "no" } } });
  await until(() => of("broken").length, (n) => n === 2, "the change's reconcile");
}, 30_000);

test("with finalizer: true the object is held until a reconcile succeeds while deleting", async () => {
  w = await world();
  const deletions: number[] = [];
  const registry = new Registry();
  registry.on.reconcile("widgets", (ctx) => {
    if (!ctx.deleting) return;
    deletions.push(deletions.length);
    if (deletions.length === 1) throw new Error("cleanup not done yet");
  }, { finalizer: true });
  await w.operate(registry, { reconcile: { backoff: { initial: 0.01, max: 1 } } });
  await w.client.create(WIDGETS, "default", widget("held"));
  await until(async () => (await w!.client.get(WIDGETS, "default", "held")).metadata.finalizers ?? [], (f) => f.includes("kobun.dev/finalizer"), "the finalizer");
  await w.client.delete(WIDGETS, "default", "held");
  await until(() => maybe(w!.client, WIDGETS, "held"), (o) => o === undefined, "the widget gone");
  expect(deletions).toEqual([0, 1]); // failed once while deleting, released after the success
}, 30_000);

test("a cache read of a resource it does not watch fails, naming it and how to declare it", async () => {
  w = await world();
  const registry = new Registry();
  registry.on.reconcile("widgets", (ctx) => {
    ctx.cache.list("secrets");
  });
  await w.operate(registry, { reconcile: { backoff: { initial: 60, max: 60 } } });
  await w.client.create(WIDGETS, "default", widget("nosy"));
  const line = await until(() => w!.lines.find((l) => l.includes("ctx.cache cannot read secrets")), Boolean, "the error");
  expect(line).toContain("name it in on.reconcile's owns or watches, or index it");
}, 30_000);

test("a resource reconciled and handled by cause is refused at start", async () => {
  w = await world();
  const registry = new Registry();
  registry.on.reconcile("widgets", () => {});
  registry.on.create("widgets.test.kobun.dev", function made() {});
  expect(w.operate(registry)).rejects.toThrow(/on.reconcile "reconcile widgets" and on.create "made" are both for widgets/);
}, 30_000);
