// Deletion (docs/reconcile.md, "Deletion"): with `finalizer: true` kobun holds the object with
// kobun.dev/finalizer (added before the first reconcile), calls the function with ctx.deleting,
// keeps the object while it throws and releases it once it returns; a requeue while deleting
// keeps it too, until a call returns nothing. Without it, a deletion held by someone else's
// finalizer is one more state: the function sees deletionTimestamp, and ctx.deleting false. A
// daemon's finalizer makes a deletion the reconcile's too; an object `when` refuses is not held.

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { Calls, operate, Widgets } from "./kit.ts";

const FINALIZER = "kobun.dev/finalizer";

test("finalizer: true holds the object until a reconcile returns while deleting", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    calls.record(ctx);
    if (!ctx.deleting) return;
    const cleanups = calls.all.filter((c) => c.deleting).length;
    if (cleanups === 1) throw new Error("the bucket is not empty yet");
    if (cleanups === 2) return { requeueAfter: 0.1 }; // still cleaning up
  }, { finalizer: true });
  await using kit = await operate(registry, { reconcile: { backoff: { initial: "50ms" } } });
  await kit.apply(Widgets, { metadata: { name: "b" }, spec: {} });
  await calls.until((c) => c.length >= 1, "the first reconcile");
  expect(calls.all[0]!.finalizers).toContain(FINALIZER); // added before the first call
  expect(calls.all[0]!.deleting).toBe(false);
  await kit.delete(Widgets, "b");
  await calls.until((c) => c.filter((x) => x.deleting).length >= 2, "two cleanups (a throw, then a requeue)");
  const held = await kit.get(Widgets, "b");
  expect(held?.metadata.deletionTimestamp).toBeDefined();
  expect(held?.metadata.finalizers).toContain(FINALIZER);
  await kit.gone(Widgets, "b");
  const cleanups = calls.all.filter((c) => c.deleting);
  expect(cleanups.length).toBe(3);
  expect(cleanups.map((c) => c.retry)).toEqual([0, 1, 0]);
}, 60_000);

test("without finalizer, a deletion held by another finalizer is a state the function sees, not ctx.deleting", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => void calls.record(ctx));
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "h", finalizers: ["test.kobun.dev/hold"] }, spec: {} });
  await calls.until((c) => c.length >= 1, "the first reconcile");
  expect(calls.all[0]!.finalizers).toEqual(["test.kobun.dev/hold"]); // kobun added none
  await kit.delete(Widgets, "h");
  const [, marked] = await calls.until((c) => c.length >= 2, "the deletion mark's reconcile");
  expect(marked!.deletionTimestamp).toBeDefined();
  expect(marked!.deleting).toBe(false);
  const released = calls.all.length;
  await kit.apply(Widgets, { metadata: { name: "h", finalizers: [] }, spec: {} });
  await kit.gone(Widgets, "h");
  // Once it is gone, nothing is called (a window for a call that would come; none must).
  await kit.consistently(Widgets, "h", (o) => o === undefined, { for: 400 });
  expect(calls.all.length).toBeLessThanOrEqual(released + 1); // at most the finalizer's removal, seen before it went
}, 60_000);

test("the cleanup's ctx.patch is not written; once released, the object held by another finalizer runs nothing more", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    calls.record(ctx);
    ctx.patch.metadata.labels = { written: ctx.deleting ? "while-deleting" : "before" };
  }, { finalizer: true });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "k", finalizers: ["test.kobun.dev/hold"] }, spec: {} });
  await kit.until(Widgets, "k", (o) => o.metadata.labels?.written === "before");
  await kit.delete(Widgets, "k");
  const released = await kit.until(Widgets, "k", (o) => !o.metadata.finalizers?.includes(FINALIZER));
  expect(released.metadata.labels?.written).toBe("before");
  expect(released.metadata.finalizers).toEqual(["test.kobun.dev/hold"]);
  await kit.consistently(Widgets, "k", (o) => o?.metadata.labels?.written === "before", { for: 400 });
  expect(calls.all.map((c) => c.deleting)).toEqual([false, true]);
}, 60_000);

test("a daemon holds kobun's finalizer: the reconcile (without finalizer: true) sees ctx.deleting", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.daemon(Widgets, async ({ signal }) => {
    await new Promise((stopped) => signal.addEventListener("abort", stopped, { once: true }));
  });
  registry.on.reconcile(Widgets, (ctx) => void calls.record(ctx));
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "d" }, spec: {} });
  await calls.until((c) => c.length >= 1, "the first run");
  await kit.delete(Widgets, "d");
  await kit.gone(Widgets, "d");
  expect(calls.all.map((c) => c.deleting)).toEqual([false, true]);
}, 60_000);

test("an object `when` refuses gets no finalizer from finalizer: true", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => void calls.record(ctx), {
    finalizer: true, when: (ctx) => ctx.labels.refused !== "yes",
  });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "refused", labels: { refused: "yes" } }, spec: {} });
  await kit.apply(Widgets, { metadata: { name: "taken" }, spec: {} });
  await calls.until((c) => c.length >= 1, "the accepted object's run");
  expect(calls.all[0]!.finalizers).toEqual([FINALIZER]);
  await kit.delete(Widgets, "refused");
  await kit.gone(Widgets, "refused"); // not held
  expect(calls.of("refused")).toEqual([]);
}, 60_000);
