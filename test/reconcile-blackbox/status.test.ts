// Status writes (docs/reconcile.md, "The function and its context"): ctx.patch is written after
// the function returns, status.observedGeneration set for you; conditions through the conditions
// helper; nothing is written when it throws; a status that would change nothing is not sent; a
// status write does not run the reconcile again; the object and its status take a request each.

import { expect, test } from "bun:test";
import { conditions, defineResource, Registry } from "kobun";
import Type from "typebox";
import { Calls, operate, Widgets } from "./kit.ts";

test("status with observedGeneration and a condition; unchanged status not sent; a throw writes nothing", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    const call = calls.record(ctx);
    ctx.patch.status.children = ctx.spec.size ?? 0;
    conditions.set(ctx.patch, { type: "Ready", status: "True", reason: "Reconciled" }, { object: ctx.body });
    if (ctx.spec.note === "boom") throw new Error("boom");
    // Ask to run again twice: the same status each time, so nothing is sent.
    return call < 2 ? { requeueAfter: 0.05 } : undefined;
  }, { id: "status" });
  await using kit = await operate(registry, { reconcile: { backoff: { initial: "5s" } } });
  await kit.apply(Widgets, { metadata: { name: "s" }, spec: { size: 2 } });
  const first = await kit.until(Widgets, "s", (o) => o.status?.children === 2);
  expect(first.status?.observedGeneration).toBe(1);
  expect(conditions.isTrue(first, "Ready")).toBe(true);
  expect(conditions.get(first, "Ready")?.reason).toBe("Reconciled");
  // Widgets' status names its conditions with conditions.schema: nothing of them is pruned.
  expect(Object.keys(conditions.get(first, "Ready")!).sort())
    .toEqual(["lastTransitionTime", "message", "observedGeneration", "reason", "status", "type"]);
  await calls.until((c) => c.length >= 3, "the two requeued runs");
  const after = await kit.get(Widgets, "s");
  expect(after?.metadata.resourceVersion).toBe(first.metadata.resourceVersion); // the same status: not written
  // A new generation: observedGeneration follows it.
  await kit.apply(Widgets, { metadata: { name: "s" }, spec: { size: 3 } });
  const second = await kit.until(Widgets, "s", (o) => o.status?.children === 3);
  expect(second.status?.observedGeneration).toBe(2);
  // A throw: its patch (size 4) is not written; the next retry is 5 s away.
  await kit.apply(Widgets, { metadata: { name: "s" }, spec: { size: 4, note: "boom" } });
  await calls.until((c) => c.some((x) => x.generation === 3), "the failing run");
  await kit.logs.until(/boom/);
  const unwritten = await kit.get(Widgets, "s");
  expect(unwritten?.status?.children).toBe(3);
  expect(unwritten?.status?.observedGeneration).toBe(2);
  // Each write above was the reconcile's own: none ran it again (3 + 1 + 1 calls).
  expect(calls.all.length).toBe(5);
}, 60_000);

test("ctx.patch is written in one request for the object and one for its status", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    calls.record(ctx);
    ctx.patch.metadata.labels = { seen: "yes" };
    ctx.patch.metadata.annotations = { by: "reconcile" };
    ctx.patch.status.ready = true;
    ctx.patch.status.children = 1;
  });
  await using kit = await operate(registry);
  const before = kit.sandbox.stats.requests("patch", { plural: "widgets" });
  await kit.apply(Widgets, { metadata: { name: "one" }, spec: {} });
  const done = await kit.until(Widgets, "one", (o) => o.status?.ready && o.metadata.labels?.seen);
  expect(done.metadata.annotations?.by).toBe("reconcile");
  expect(done.status?.children).toBe(1);
  // The label change ran it once more; that run's patch changes nothing, and is not sent.
  await calls.until((c) => c.length >= 2, "the run for the new labels");
  await kit.consistently(Widgets, "one", (o) => o?.metadata.resourceVersion === done.metadata.resourceVersion, { for: 300 });
  // The kit's apply (a PATCH, server-side apply), then the object's and the status's.
  expect(kit.sandbox.stats.requests("patch", { plural: "widgets" }) - before).toBe(3);
}, 60_000);

test("a status field the resource's schema does not name is pruned by the API server: said once, by name", async () => {
  const Gadgets = defineResource({
    group: "blackbox.kobun.dev", kind: "Gadget", plural: "gadgets",
    schema: { spec: Type.Object({}), status: Type.Object({ ready: Type.Optional(Type.Boolean()) }) },
  });
  const registry = new Registry();
  registry.on.reconcile(Gadgets, (ctx) => {
    ctx.patch.status.ready = true;
    conditions.set(ctx.patch, { type: "Ready", status: true }, { object: ctx.body });
  });
  await using kit = await operate(registry);
  for (const name of ["g1", "g2"]) await kit.apply(Gadgets, { metadata: { name }, spec: {} });
  for (const name of ["g1", "g2"]) await kit.until(Gadgets, name, (o) => o.status?.ready === true);
  await kit.logs.until(/status\.conditions was pruned.*conditions\.schema/);
  expect(kit.logs.lines.filter((line) => line.includes("status.conditions was pruned")).length).toBe(1);
  expect(((await kit.get(Gadgets, "g1"))?.status as Record<string, unknown>).conditions).toBeUndefined();
}, 60_000);
