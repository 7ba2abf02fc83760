// docs/indexes.md and docs/daemons.md as a user reads them: index keys compared by value (tuples,
// `1` apart from `"1"`), an object leaving the index on deletion, a bad key leaving it out with an
// error; a daemon's live ctx.spec, its patch and result written on return; a timer's result.

import { expect, test } from "bun:test";
import Type from "typebox";
import { defineResource, Registry, sleep, type Index } from "kobun";
import { startOperator } from "kobun/testing";
import { within } from "./helpers.ts";

const Things = () => defineResource({
  group: "blackbox.kobun.dev", kind: "Thing", plural: "things",
  schema: { spec: Type.Object({ size: Type.Integer() }), status: Type.Record(Type.String(), Type.Unknown()) },
});

test("index keys: tuples found by value, 1 and \"1\" apart, an object gone on deletion, a NaN key left out with an error", async () => {
  const registry = new Registry();
  registry.on.index("v1/configmaps", ({ namespace = "", name, body }) => {
    const data = body.data as Record<string, string> | undefined;
    if (data?.bad) return new Map([[Number.NaN, name]]);
    return [[[namespace, name], data?.phase ?? "none"], [Number(data?.n ?? 0), name], [String(data?.n ?? 0), `str:${name}`]];
  }, { id: "byKey" });
  const reads: unknown[] = [];
  registry.on.create("v1/secrets", ({ indexes, patch }) => {
    const index = indexes.byKey as Index<string, [string, string] | number | string>;
    reads.push({ tuple: index.get(["default", "one"]), number: index.get(1), string: index.get("1"), size: index.size,
      gone: index.has(["default", "two"]), nan: [...index.keys()].some((k) => typeof k === "number" && Number.isNaN(k)) });
    patch.metadata.labels = { read: "yes" };
  }, { id: "reader" });
  await using kit = await startOperator({ registry, logLevel: "silent", logCapture: "warn", timeout: 15_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "one" }, data: { phase: "Running", n: "1" } });
  await kit.apply("v1/configmaps", { metadata: { name: "two" }, data: { n: "2" } });
  await kit.apply("v1/configmaps", { metadata: { name: "bad" }, data: { bad: "yes" } });
  const line = await kit.logs.until(/index fn failed/);            // the bad key named in an error line
  expect(line).toContain("name=bad");
  expect(line).toContain("got NaN");
  expect(line).not.toContain("inside");
  await kit.delete("v1/configmaps", "two");
  await kit.gone("v1/configmaps", "two");
  await kit.apply("v1/secrets", { metadata: { name: "probe" }, stringData: { x: "1" } });
  await kit.until("v1/secrets", "probe", (o) => o.metadata.labels?.read === "yes");
  expect(reads[0]).toEqual({ tuple: ["Running"], number: ["one"], string: ["str:one"], size: 3, gone: false, nan: false });
}, 30_000);

test("a daemon's ctx.spec is live; its patch and result are written when it returns; a timer's result lands too", async () => {
  const Things_ = Things();
  const registry = new Registry();
  registry.on.daemon(Things_, async (ctx) => {
    while (ctx.spec.size < 3 && await sleep(0.05, ctx.stopped)) { /* waits for the watch to bring the change */ }
    ctx.patch.status.seenSize = ctx.spec.size;
    return { stopped: true };
  }, { id: "follower" });
  registry.on.timer(Things_, ({ spec }) => ({ size: spec.size }), { id: "check", interval: 0.2 });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply(Things_, { metadata: { name: "t" }, spec: { size: 1 } });
  await kit.until(Things_, "t", (o) => o.status?.check);
  await kit.apply(Things_, { metadata: { name: "t" }, spec: { size: 3 } });
  const done = await kit.until(Things_, "t", (o) => o.status?.follower);
  expect(done.status?.follower).toEqual({ stopped: true });
  expect(done.status?.seenSize).toBe(3);
  await kit.logs.until("Daemon 'follower' succeeded.");
  // Both hold the finalizer while they run: the deletion waits for the timer to stop, then completes.
  await kit.delete(Things_, "t");
  await kit.gone(Things_, "t");
}, 30_000);

test("a deletion asks the daemon to stop (ctx.stopped), makes it (ctx.signal, cancellationBackoff later), then runs the delete handlers once", async () => {
  const registry = new Registry();
  const order: string[] = [];
  const abortOf = (signal: AbortSignal) => new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  const { promise: running, resolve: started } = Promise.withResolvers<void>();
  registry.on.daemon("v1/configmaps", async ({ stopped, signal }) => {
    order.push("started");
    started();
    await abortOf(stopped);
    order.push("asked");
    await abortOf(signal);
    order.push("made to");
  }, { id: "d", cancellationBackoff: 0.3 });
  registry.on.delete("v1/configmaps", () => { order.push("delete handler"); }, { id: "del" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "d" } });
  await kit.until("v1/configmaps", "d", (o) => o.metadata.finalizers?.length);
  await within(running, 15_000, "the daemon's start");
  await kit.delete("v1/configmaps", "d");
  await kit.gone("v1/configmaps", "d");
  expect(order).toEqual(["started", "asked", "made to", "delete handler"]);
}, 30_000);
