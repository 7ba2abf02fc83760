// More of a reconcile's options and errors (docs/reconcile.md, "The function and its context"):
// `when` leaves refused objects alone until their next trigger; a TemporaryError without a delay
// takes the backoff; any failure is logged with a Warning Event (reason Reconcile) on the object;
// a cache read of an unwatched resource is such a failure; a reconcile's default id names its
// resource; `workers.limit` bounds the reconciles at once.

import { expect, test } from "bun:test";
import { Registry, resource, TemporaryError } from "kobun";
import { AtOnce, Calls, operate, Widgets } from "./kit.ts";

test("when: a refused object is not reconciled, and is looked at again at its next trigger", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => void calls.record(ctx), { when: (ctx) => ctx.labels.on === "yes" });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "off" }, spec: {} });
  await kit.consistently(Widgets, "off", (o) => o !== undefined, { for: 400 });
  expect(calls.all.length).toBe(0);
  await kit.apply(Widgets, { metadata: { name: "off", labels: { on: "yes" } }, spec: {} });
  await calls.until((c) => c.length >= 1, "the accepted object's reconcile");
  expect(calls.all[0]!.labels.on).toBe("yes");
}, 60_000);

test("a TemporaryError without delay takes the backoff; each failure posts a Warning Event", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    if (calls.record(ctx) < 2) throw new TemporaryError("the bucket is not ready");
  });
  await using kit = await operate(registry, { reconcile: { backoff: { initial: "200ms" } } });
  const made = await kit.apply(Widgets, { metadata: { name: "t" }, spec: {} });
  await calls.until((c) => c.length >= 3, "two retries");
  const [first, second] = calls.all.slice(1).map((c, i) => (c.at - calls.all[i]!.at) / 1000);
  expect(first).toBeGreaterThanOrEqual(0.19);
  expect(second).toBeGreaterThanOrEqual(0.39);
  const events = await kit.events(made, {
    until: (list) => list.filter((e) => e.type === "Warning" && e.reason === "Reconcile").length >= 1,
  });
  expect(events.some((e) => e.message?.includes("the bucket is not ready"))).toBe(true);
}, 60_000);

test("a cache read of an unwatched resource fails the reconcile, which is retried; the log names the function", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, function tidy(ctx) {
    if (calls.record(ctx) < 1) ctx.cache.list(resource.secrets);
  });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "u" }, spec: {} });
  await calls.until((c) => c.length >= 2, "the retry");
  expect(calls.all[1]!.retry).toBe(1);
  await kit.logs.until(/Reconcile 'tidy' failed.*ctx\.cache cannot read secrets/);
}, 60_000);

test("a reconcile of an arrow function is named after its resource", async () => {
  const registry = new Registry();
  registry.on.reconcile(Widgets, () => {
    throw new TemporaryError("named?", { delay: 60 });
  });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "n" }, spec: {} });
  await kit.logs.until(/Reconcile 'reconcile widgets\.blackbox\.kobun\.dev\/v1' failed/);
}, 60_000);

test("workers.limit bounds how many objects are reconciled at once", async () => {
  const calls = new Calls();
  const atOnce = new AtOnce();
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    atOnce.enter();
    calls.record(ctx);
    await Bun.sleep(30); // the work of a reconcile, so that they overlap
    atOnce.leave();
  });
  await using kit = await operate(registry, { workers: { limit: 2 } });
  await Promise.all(["a", "b", "c", "d", "e", "f"].map((name) => kit.apply(Widgets, { metadata: { name }, spec: {} })));
  await calls.until((c) => c.length >= 6, "six reconciles");
  expect(atOnce.most).toBe(2);
}, 60_000);
