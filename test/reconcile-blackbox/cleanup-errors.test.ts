// A reconcile's cleanup that fails for good (docs/reconcile.md, "Deletion"): with `finalizer: true`,
// a PermanentError while `ctx.deleting` keeps the object held, posted as a Warning Event, and not
// retried until the object's next trigger (here a label); a return then releases it. Unlike a
// Kopf-style on.delete, whose failure for good (PermanentError, out of retries) releases the
// finalizer, as Kopf's does (docs/handlers.md said "until every delete handler succeeded"): the
// docs now say both. (Pinned here, not changed: controller-runtime's TerminalError holds, as the
// reconcile does.)

import { expect, test } from "bun:test";
import { PermanentError, Registry } from "kobun";
import { Calls, operate, Widgets } from "./kit.ts";

test("a PermanentError while deleting holds the object until its next trigger; a return then releases it", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    calls.record(ctx);
    if (ctx.deleting && ctx.labels.giveUp !== "yes") throw new PermanentError("the bucket cannot be emptied");
  }, { finalizer: true, id: "buckets" });
  await using kit = await operate(registry);
  const made = await kit.apply(Widgets, { metadata: { name: "b" }, spec: {} });
  await calls.until((c) => c.length >= 1, "the first reconcile");
  await kit.delete(Widgets, "b");
  await kit.events(made, { until: (list) => list.some((e) => e.type === "Warning" && e.reason === "Reconcile") });
  // With the default backoff (5 ms) a retry would have come long before: none comes, and the object stays.
  await kit.consistently(Widgets, "b", (o) => o?.metadata.deletionTimestamp !== undefined, { for: 300 });
  expect(calls.all.filter((c) => c.deleting).length).toBe(1);
  await kit.apply(Widgets, { metadata: { name: "b", labels: { giveUp: "yes" } }, spec: {} });
  await kit.gone(Widgets, "b");
  expect(calls.all.filter((c) => c.deleting).map((c) => c.labels.giveUp ?? "-")).toEqual(["-", "yes"]);
}, 60_000);

test("a Kopf-style on.delete that fails for good (PermanentError, out of retries) releases the finalizer", async () => {
  const registry = new Registry();
  registry.on.create(Widgets, () => {}, { id: "made" });
  registry.on.delete(Widgets, ({ name }) => {
    if (name === "k") throw new PermanentError("cannot clean up");
    throw new Error("still cannot");
  }, { id: "cleanup", retries: 2, backoff: 0.05 });
  await using kit = await operate(registry);
  for (const name of ["k", "r"]) {
    await kit.apply(Widgets, { metadata: { name }, spec: {} });
    await kit.until(Widgets, name, (o) => o.metadata.finalizers?.includes("kobun.dev/finalizer"));
    await kit.delete(Widgets, name);
  }
  await kit.gone(Widgets, "k");
  await kit.gone(Widgets, "r");
  await kit.logs.until(/still cannot/);
}, 60_000);
