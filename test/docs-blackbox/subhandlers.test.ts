// docs/handlers.md's sub-handlers (Kopf's @kopf.subhandler) and the rest of what a cycle promises:
// a failing sub-handler is retried alone and the parent's result lands once all succeeded; an update
// handler's `old: PRESENT, new: ABSENT` is a removal; a daemon that throws is restarted with its
// patch written; ctx.api defaults to the handled object's namespace, `namespace: null` is every one.

import { expect, test } from "bun:test";
import Type from "typebox";
import { ABSENT, defineResource, PRESENT, Registry, resource, TemporaryError } from "kobun";
import { startOperator } from "kobun/testing";

const Things = () => defineResource({
  group: "blackbox.kobun.dev", kind: "Batch", plural: "batches",
  schema: {
    spec: Type.Object({ items: Type.Optional(Type.Array(Type.String())), mode: Type.Optional(Type.String()) }),
    status: Type.Record(Type.String(), Type.Unknown()),
  },
});

test("sub-handlers: ids nest, a failing one is retried alone, the parent's result lands once all succeeded", async () => {
  const Batches = Things();
  const registry = new Registry();
  const runs: string[] = [];
  let failOnce = true;
  registry.on.create(Batches, (ctx) => {
    runs.push("parent");
    for (const item of ctx.spec.items ?? []) {
      ctx.subhandler(item, ({ retry }) => {
        runs.push(`${item}#${retry}`);
        if (item === "b" && failOnce) {
          failOnce = false;
          throw new TemporaryError("not ready yet", { delay: 0.2 });
        }
        return { item };
      });
    }
    return { items: ctx.spec.items?.length ?? 0 };
  }, { id: "create_fn" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply(Batches, { metadata: { name: "t" }, spec: { items: ["a", "b"] } });
  const done = await kit.until(Batches, "t", (o) => o.status?.create_fn);
  expect(done.status?.create_fn).toEqual({ items: 2 });
  expect(done.status?.["create_fn/a"]).toEqual({ item: "a" });
  expect(done.status?.["create_fn/b"]).toEqual({ item: "b" });
  expect(runs).toEqual(["parent", "a#0", "b#0", "parent", "b#1"]);   // a never again; the parent re-registers
}, 30_000);

test("an update handler with { field, old: PRESENT, new: ABSENT } runs on the field's removal", async () => {
  const Batches = Things();
  const registry = new Registry();
  registry.on.update(Batches, ({ old, new: now }) => ({ old, removed: now === undefined }),
    { id: "removed", field: "spec.mode", old: PRESENT, new: ABSENT });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply(Batches, { metadata: { name: "m" }, spec: { mode: "fast" } });
  await kit.until(Batches, "m", (o) => o.status?.kobun);
  await kit.apply(Batches, { metadata: { name: "m" }, spec: { mode: "slow" } });                    // changed: not removed
  const changed = await kit.until(Batches, "m", (o) => JSON.stringify(o.status?.kobun ?? {}).includes("slow"));
  expect(changed.status?.removed).toBeUndefined();
  await kit.apply(Batches, { metadata: { name: "m" }, spec: {} });
  expect((await kit.until(Batches, "m", (o) => o.status?.removed)).status?.removed).toEqual({ old: "slow", removed: true });
}, 30_000);

test("a daemon that throws is restarted (ctx.retry counts), its patch written after each exit", async () => {
  const Batches = Things();
  const registry = new Registry();
  const restarts: number[] = [];
  registry.on.daemon(Batches, async ({ retry, patch }) => {
    restarts.push(retry);
    patch.status.attempt = retry;
    if (retry < 1) throw new TemporaryError("again", { delay: 0.1 });
  }, { id: "worker" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply(Batches, { metadata: { name: "d" }, spec: {} });
  await kit.until(Batches, "d", (o) => o.status?.attempt === 1);
  await kit.logs.until("Daemon 'worker' succeeded.");
  expect(restarts).toEqual([0, 1]);
}, 30_000);

test("ctx.api: a namespaced kind in the handled object's namespace, `namespace: null` every one, a cluster-scoped kind none", async () => {
  const registry = new Registry();
  const listed: unknown[] = [];
  registry.on.create("v1/configmaps", async ({ api, patch }) => {
    const here = await api.list("configmaps");
    const everywhere = await api.list(resource.configmaps, { namespace: null });
    const namespaces = await api.list(resource.namespaces);
    listed.push([here.map((c) => c.metadata.name), everywhere.map((c) => c.metadata.namespace).sort(),
      namespaces.some((n) => n.metadata.name === "team-a")]);
    patch.metadata.labels = { listed: "yes" };
  }, { id: "lister", when: ({ name }) => name === "probe" });
  await using kit = await startOperator({ registry, logLevel: "silent", namespace: "team-a", timeout: 15_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "elsewhere" } }, { namespace: "default" });
  await kit.apply("v1/configmaps", { metadata: { name: "probe" } });
  await kit.until("v1/configmaps", "probe", (o) => o.metadata.labels?.listed);
  expect(listed).toEqual([[["probe"], ["default", "team-a"], true]]);
}, 30_000);
