// Kopf behaviours a user carries over, as handlers.md, filters.md and daemons.md state them: a
// handler's timeout counts from its first attempt across retries; a create handler whose filters
// did not match at the creation does not run when they match later (an update), while a delete
// handler that now matches takes its finalizer; an idle timer is not held off by kobun's own
// bookkeeping (a retrying handler's progress annotations).

import { expect, test } from "bun:test";
import { Registry, TemporaryError } from "kobun";
import { startOperator } from "kobun/testing";
import { lastHandled } from "../docs-blackbox/helpers.ts";

const CM = "v1/configmaps";

test("virtual clock: timeout counts from the first attempt: retries at 0 and 30 s, failed at 60 s uncalled", async () => {
  const registry = new Registry();
  const at: number[] = [];
  let now = () => 0;
  registry.on.create(CM, () => {
    at.push(now());
    throw new TemporaryError("later", { delay: 30 });
  }, { id: "bounded", timeout: 60 });
  await using kit = await startOperator({ registry, logLevel: "info", timeout: 15_000, clock: "virtual" });
  const t0 = kit.now().getTime();
  now = () => (kit.now().getTime() - t0) / 1000;
  await kit.apply(CM, { metadata: { name: "t" }, data: {} });
  await kit.logs.until("Handler 'bounded' failed temporarily: later"); // the first attempt, before time moves
  await kit.advance(100);
  await kit.logs.until("Handler 'bounded' failed permanently: handler bounded timed out after 60s");
  expect(at.length).toBe(2);
  expect(at[1]! - at[0]!).toBe(30);
}, 30_000);

test("a create handler unmatched at the creation does not run once labelled; a delete handler then holds it", async () => {
  const registry = new Registry();
  const calls: string[] = [];
  registry.on.create(CM, () => { calls.push("create"); }, { id: "c", labels: { on: "yes" } });
  registry.on.update(CM, () => { calls.push("update"); }, { id: "u" });
  registry.on.delete(CM, () => { calls.push("delete"); }, { id: "d", labels: { on: "yes" } });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply(CM, { metadata: { name: "l" }, data: {} });
  expect((await kit.until(CM, "l", lastHandled)).metadata.finalizers ?? []).toEqual([]);
  await kit.apply(CM, { metadata: { name: "l", labels: { on: "yes" } }, data: {} });
  const labelled = await kit.until(CM, "l", (o) => lastHandled(o)?.includes('"on"'));
  expect(labelled.metadata.finalizers).toEqual(["kobun.dev/finalizer"]);
  await kit.delete(CM, "l");
  await kit.gone(CM, "l");
  expect(calls).toEqual(["update", "delete"]);
}, 30_000);

test("virtual clock: an idle timer is not held off by a retrying handler's progress annotations", async () => {
  const registry = new Registry();
  const at: number[] = [];
  let now = () => 0;
  registry.on.timer(CM, () => { at.push(now()); }, { id: "quiet", interval: 10, idle: 30 });
  registry.on.create(CM, () => { throw new TemporaryError("never", { delay: 5 }); }, { id: "failing" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000, clock: "virtual" });
  await kit.apply(CM, { metadata: { name: "i" }, data: {} });
  await kit.until(CM, "i", (o) => o.metadata.finalizers?.length);
  const t0 = kit.now().getTime();
  now = () => (kit.now().getTime() - t0) / 1000;
  for (let i = 0; i < 8; i++) await kit.advance(6);
  expect(at[0]).toBeLessThanOrEqual(30);
  expect(at.length).toBeGreaterThanOrEqual(2);
}, 30_000);

test("a deletion while a create handler waits out a 60 s retry: the delete handler runs at once, the create not again", async () => {
  const registry = new Registry();
  const calls: string[] = [];
  registry.on.create(CM, () => { calls.push("create"); throw new TemporaryError("never", { delay: 60 }); }, { id: "c" });
  registry.on.delete(CM, () => { calls.push("delete"); }, { id: "d" });
  await using kit = await startOperator({ registry, logLevel: "info", timeout: 15_000 });
  await kit.apply(CM, { metadata: { name: "x" }, data: {} });
  await kit.logs.until("Handler 'c' failed temporarily: never");
  await kit.until(CM, "x", (o) => o.metadata.finalizers?.length);
  await kit.delete(CM, "x");
  await kit.gone(CM, "x");
  expect(calls).toEqual(["create", "delete"]);
}, 30_000);
