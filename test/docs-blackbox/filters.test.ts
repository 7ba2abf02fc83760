// docs/filters.md's rules per handler kind: a create handler with a `field` sees old/new/diff
// narrowed to it; a delete handler that does not match holds no finalizer; an update handler's
// `value` matches the value before or after; a label predicate gets the update's context (diff,
// old); a daemon is stopped when its object stops matching.

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { startOperator } from "kobun/testing";
import { within } from "./helpers.ts";

test("filters per handler kind, as filters.md lists them", async () => {
  const registry = new Registry();
  const log: unknown[] = [];
  const { promise: daemonStopped, resolve: stopped } = Promise.withResolvers<void>();
  registry.on.create("v1/configmaps", ({ old, new: now, diff }) => { log.push(["create", old, now, diff]); },
    { id: "narrowed", field: "data.mode" });
  registry.on.delete("v1/configmaps", () => {}, { id: "guarded", labels: { guarded: "yes" } });
  registry.on.update("v1/configmaps", ({ old, new: now }) => { log.push(["left fast", old, now]); },
    { id: "leftFast", field: "data.mode", value: "fast" });
  registry.on.update("v1/configmaps", () => {}, { id: "predicated", labels: {
    team: (value, ctx) => { log.push(["predicate", value, ctx.diff.length, ctx.old?.data?.mode]); return true; },
  } });
  registry.on.daemon("v1/configmaps", async ({ signal }) => {
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    stopped();
  }, { id: "runner", labels: { run: "yes" } });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  const handled = (o: { metadata: { annotations?: Record<string, string> } }) => o.metadata.annotations?.["kobun.dev/last-handled-configuration"];

  await kit.apply("v1/configmaps", { metadata: { name: "a", labels: { team: "x" } }, data: { mode: "fast", other: "1" } });
  await kit.apply("v1/configmaps", { metadata: { name: "b", labels: { guarded: "yes", run: "yes" } }, data: { other: "1" } });
  expect((await kit.until("v1/configmaps", "a", handled)).metadata.finalizers ?? []).toEqual([]);   // matches no delete handler
  expect((await kit.until("v1/configmaps", "b", handled)).metadata.finalizers).toEqual(["kobun.dev/finalizer"]);
  expect(log).toEqual([["create", undefined, "fast", [{ op: "add", path: [], new: "fast" }]]]);

  await kit.apply("v1/configmaps", { metadata: { name: "a", labels: { team: "x" } }, data: { mode: "slow", other: "1" } });
  await kit.logs.until("Handler 'leftFast' succeeded.");
  await kit.logs.until("Handler 'predicated' succeeded.");
  expect(log.slice(1)).toEqual(expect.arrayContaining([["predicate", "x", 1, "fast"], ["left fast", "fast", "slow"]]));

  await kit.apply("v1/configmaps", { metadata: { name: "b", labels: { guarded: "yes", run: "no" } }, data: { other: "1" } });
  await within(daemonStopped, 15_000, "the daemon's stop once its object no longer matches");
}, 30_000);
