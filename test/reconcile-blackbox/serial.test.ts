// One reconcile of an object at a time, changes meanwhile run it once more on the latest state;
// an object deleted and made again under the same name never gets the old one's writes (the
// deletion aborts the old one's running reconcile); and the
// registration rules: one reconcile per resource, never beside handlers by cause on it
// (docs/reconcile.md, "Reconcile, or handlers by cause?", "Guarantees shared with the other handlers");
// owns and watches that name no resource are refused when registered.

import { expect, test } from "bun:test";
import { Registry, resource } from "kobun";
import { Calls, operate, Widgets } from "./kit.ts";

test("never two reconciles of one object at once; changes while it runs make one more run, on the latest", async () => {
  const calls = new Calls();
  let running = 0;
  let most = 0;
  const { promise: gate, resolve: open } = Promise.withResolvers<void>();
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    most = Math.max(most, ++running);
    calls.record(ctx);
    try {
      if (calls.all.length === 1) await gate;
    } finally {
      running--;
    }
  });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "one" }, spec: { size: 1 } });
  await calls.until((c) => c.length === 1, "the first run");
  for (const size of [2, 3, 4]) await kit.apply(Widgets, { metadata: { name: "one" }, spec: { size } });
  await kit.until(Widgets, "one", (o) => o.metadata.generation === 4);
  open();
  await calls.until((c) => c.some((x) => x.generation === 4), "the run on the latest generation");
  expect(most).toBe(1);
  expect(calls.all.map((c) => c.generation)).toEqual([1, 4]);
}, 60_000);

test("an object made again under the same name never gets the old one's writes", async () => {
  const calls = new Calls();
  const { promise: gate, resolve: open } = Promise.withResolvers<void>();
  let oldAborted: boolean | undefined;
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    calls.record(ctx);
    if (ctx.spec.note === "old") {
      await gate; // held while the object is deleted and made again
      oldAborted = ctx.signal.aborted;
    }
    ctx.patch.status.ready = ctx.spec.note !== "old";
    ctx.patch.metadata.labels = { written: ctx.spec.note ?? "-" };
  });
  await using kit = await operate(registry);
  const old = await kit.apply(Widgets, { metadata: { name: "r" }, spec: { note: "old" } });
  await calls.until((c) => c.length === 1, "the old object's run");
  await kit.delete(Widgets, "r");
  await kit.gone(Widgets, "r");
  const made = await kit.apply(Widgets, { metadata: { name: "r" }, spec: { note: "new" } });
  expect(made.metadata.uid).not.toBe(old.metadata.uid);
  open(); // the old object's reconcile ends now, its patch in hand
  const fresh = await kit.until(Widgets, "r", (o) => o.metadata.labels?.written === "new");
  expect(fresh.status?.ready).toBe(true);
  expect(oldAborted).toBe(true); // the deletion aborted the old object's reconcile
  await kit.consistently(Widgets, "r", (o) => o?.metadata.labels?.written !== "old" && o?.status?.ready !== false, { for: 500 });
}, 60_000);

test("a reconcile beside on.create of one resource does not start, naming both; a second reconcile is refused", async () => {
  const registry = new Registry();
  registry.on.reconcile(Widgets, () => {});
  expect(() => registry.on.reconcile(Widgets, () => {})).toThrow(/widgets/);
  registry.on.create(Widgets, () => {}, { id: "greet" });
  const started = operate(registry);
  await expect(started).rejects.toThrow(/reconcile/);
  await started.catch((error: Error) => {
    expect(error.message).toContain("widgets");
    expect(error.message).toContain("on.create");
  });
}, 60_000);

test("owns and watches that name no resource are refused at registration, naming the option", () => {
  const register = (options: object) => () => new Registry().on.reconcile(Widgets, () => {}, options);
  expect(register({ owns: ["apps//deployments"] })).toThrow(/on\.reconcile ".*": owns: cannot read resource selector "apps\/\/deployments"/);
  expect(register({ owns: "configmaps" })).toThrow(/owns must be a list/);
  expect(register({ watches: [{ resource: "apps//x", map: () => null }] })).toThrow(/watches: cannot read resource selector/);
  expect(register({ watches: [{ resource: "configmaps" }] })).toThrow(/each of watches needs a resource and a map function/);
  expect(register({ owns: [resource.configmaps, "apps/v1/deployments"] })).not.toThrow();
});
