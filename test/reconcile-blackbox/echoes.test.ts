// The echo rule (docs/reconcile.md, "The echo rule"): the watch's echo of a child the reconcile
// wrote blind (without reading that resource first) wakes nothing; after a read of it, the echo
// wakes the owner, as any change does; `reconcile.quietEchoes: false` makes every echo wake it.
// Someone else's change of the child always wakes it, and so does the reconcile's own delete.

import { expect, test } from "bun:test";
import { adopt, Registry, resource } from "kobun";
import type { TestOperator } from "kobun/testing";
import { Calls, operate, Widgets } from "./kit.ts";

/** Runs a reconcile that applies its child, reading the children first when `reads`; the calls it made. */
async function childWrites(reads: boolean, settings: object, after?: (kit: TestOperator) => Promise<void>): Promise<number> {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    calls.record(ctx);
    if (reads) ctx.cache.list(resource.configmaps);
    const child = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${ctx.name}-child` }, data: { v: "1" } };
    await ctx.api.apply(adopt(child, { owner: ctx.body }));
    ctx.patch.status.ready = true;
  }, { owns: [resource.configmaps] });
  await using kit = await operate(registry, { workers: { batchWindow: 0 }, ...settings });
  await kit.apply(Widgets, { metadata: { name: "e" }, spec: {} });
  await kit.until(Widgets, "e", (o) => o.status?.ready);
  if (reads || "reconcile" in settings) await calls.until((c) => c.length >= 2, "the echo's wake");
  // Long enough for an echo's wake to come; none more must.
  await kit.consistently(resource.configmaps, "e-child", (c) => c?.data?.v === "1", { for: 500 });
  await after?.(kit);
  if (after) await calls.until((c) => c.length >= 2, "the wake by someone else's change");
  return calls.all.length;
}

test("a blind write's echo wakes nothing; someone else's change of the child does", async () => {
  const touch = (kit: TestOperator) =>
    kit.apply(resource.configmaps, { metadata: { name: "e-child" }, data: { other: "yes" } }).then(() => {});
  expect(await childWrites(false, {}, touch)).toBe(2);
}, 60_000);

test("after a read of the children, the echo wakes the owner once", async () => {
  expect(await childWrites(true, {})).toBe(2);
}, 60_000);

test("reconcile.quietEchoes: false makes a blind write's echo wake the owner too", async () => {
  expect(await childWrites(false, { reconcile: { quietEchoes: false } })).toBe(2);
}, 60_000);

test("a reconcile's own delete of a child is never blind: its echo wakes the owner", async () => {
  const calls = new Calls();
  let deleted = -1;
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    const call = calls.record(ctx);
    if (ctx.labels.drop !== "yes" || deleted >= 0) return;
    deleted = call;
    await ctx.api.delete(resource.configmaps, `${ctx.name}-child`);
  }, { owns: [resource.configmaps] });
  await using kit = await operate(registry, { workers: { batchWindow: 0 } });
  const owner = await kit.apply(Widgets, { metadata: { name: "x" }, spec: {} });
  const ref = { apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", name: "x", uid: owner.metadata.uid!, controller: true };
  await kit.apply(resource.configmaps, { metadata: { name: "x-child", ownerReferences: [ref] } });
  await calls.until((c) => c.length >= 2, "the wake by the child made");
  await kit.apply(Widgets, { metadata: { name: "x", labels: { drop: "yes" } }, spec: {} });
  await kit.gone(resource.configmaps, "x-child");
  await calls.until((c) => deleted >= 0 && c.length > deleted + 1, "the wake by the deletion's echo");
}, 60_000);
