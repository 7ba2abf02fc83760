// handlers.md's causes table, read by a Kopf user: on.field runs on the creation and on updates
// that touch its field, not on the deletion (as Kopf's: a deletion changes no field); an optional
// delete handler holds no finalizer and so runs only while kobun's finalizer holds the object for
// something else (Kopf's optional=True); on.event gets every watch event, those of one object
// within workers.batchWindow merged, the latest winning (Kopf's batch window).

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { startOperator } from "kobun/testing";
import { lastHandled, within } from "../docs-blackbox/helpers.ts";

const CM = "v1/configmaps";

test("on.field: on the creation and an update touching the field, not on the deletion", async () => {
  const registry = new Registry();
  const calls: unknown[] = [];
  registry.on.field(CM, { field: "data.mode", id: "mode" }, ({ old, new: now }) => { calls.push([old, now]); });
  registry.on.delete(CM, () => { calls.push("delete"); }, { id: "bye" });
  await using kit = await startOperator({ registry, logLevel: "info", timeout: 15_000 });
  await kit.apply(CM, { metadata: { name: "a" }, data: { mode: "x" } });
  await kit.logs.until("Handler 'mode' succeeded.");
  await kit.apply(CM, { metadata: { name: "a" }, data: { mode: "y" } });
  await kit.until(CM, "a", (o) => lastHandled(o)?.includes('"y"'));
  await kit.delete(CM, "a");
  await kit.gone(CM, "a");
  expect(calls).toEqual([[undefined, "x"], ["x", "y"], "delete"]);
}, 30_000);

test("optional delete: runs when a daemon's finalizer holds the object, not when nothing of kobun's does", async () => {
  const registry = new Registry();
  const calls: string[] = [];
  registry.on.delete(CM, ({ name }) => { calls.push(name); }, { id: "bestEffort", optional: true });
  registry.on.daemon(CM, ({ signal }) => new Promise((r) => signal.addEventListener("abort", r, { once: true })),
    { id: "holder", labels: { held: "yes" }, cancellationBackoff: 0 });
  registry.on.create(CM, () => {}, { id: "seen" });
  await using kit = await startOperator({ registry, logLevel: "info", timeout: 15_000 });
  await kit.apply(CM, { metadata: { name: "alone", finalizers: ["example.com/other"] }, data: {} });
  await kit.apply(CM, { metadata: { name: "held", labels: { held: "yes" } }, data: {} });
  expect((await kit.until(CM, "alone", lastHandled)).metadata.finalizers).toEqual(["example.com/other"]);
  await kit.until(CM, "held", (o) => o.metadata.finalizers?.includes("kobun.dev/finalizer"));
  await kit.delete(CM, "alone");  // held by another finalizer, not by kobun's: no delete cause (Kopf's FREE)
  await kit.until(CM, "alone", (o) => o.metadata.deletionTimestamp);
  await kit.delete(CM, "held");
  await kit.gone(CM, "held");
  expect(calls).toEqual(["held"]);
  await kit.apply(CM, { metadata: { name: "alone", finalizers: [] } });
  await kit.gone(CM, "alone");
  expect(calls).toEqual(["held"]);
}, 30_000);

test("on.event: a change the handler is given time for is `modified`; a quick sequence ends in `deleted`", async () => {
  const registry = new Registry();
  const seen: string[] = [];
  const modified = Promise.withResolvers<void>();
  const deleted = Promise.withResolvers<void>();
  registry.on.event(CM, ({ type, name }) => {
    seen.push(`${type} ${name}`);
    if (type === "modified") modified.resolve();
    if (type === "deleted") deleted.resolve();
  }, { id: "ev" });
  await using kit = await startOperator({ registry, logLevel: "info", timeout: 15_000 });
  await kit.apply(CM, { metadata: { name: "e" }, data: {} });
  await kit.logs.until(/Handler 'ev' succeeded.*name=e/);
  await kit.apply(CM, { metadata: { name: "e" }, data: { a: "1" } });
  await within(modified.promise, 15_000, "the modified event");
  // Three events within one batch window may reach the handler as fewer: the latest always.
  await kit.apply(CM, { metadata: { name: "e" }, data: { a: "2" } });
  await kit.delete(CM, "e");
  await within(deleted.promise, 15_000, "the deleted event");
  expect(seen.at(-1)).toBe("deleted e");
  expect(seen.slice(0, 2)).toEqual(["added e", "modified e"]);
  expect(seen.slice(2).every((s) => s === "modified e" || s === "deleted e")).toBe(true);
}, 30_000);
