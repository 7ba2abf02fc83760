// The README's "What kobun promises handlers" and docs/from-kopf.md's parity claims, as a user
// checks them against the sandbox: a simple create costs exactly one request, a handler's own write
// to its object does not come back as an update, on.event's types, errors: "ignored", an optional
// delete handler holds no finalizer, a metadata-only resource's spec throws, saying why, and a
// deletion of an object kobun's finalizer holds does not abort its running handler, and after a
// freeze an Event a running handler or reconcile posts is not written.

import { expect, test } from "bun:test";
import Type from "typebox";
import { ApplyConflictError, defineResource, Registry, resource, Toggle, type EventRecorder } from "kobun";
import { startOperator } from "kobun/testing";
import { within } from "./helpers.ts";

const Examples = () => defineResource({
  group: "blackbox.kobun.dev", kind: "Example", plural: "examples",
  schema: { spec: Type.Object({ size: Type.Integer() }), status: Type.Record(Type.String(), Type.Unknown()) },
});

test("a simple create costs exactly one request: one PATCH with the result, progress and diff base", async () => {
  const Things = Examples();
  const registry = new Registry();
  registry.on.create(Things, ({ name }) => ({ message: `hello ${name}` }), { id: "create_fn" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  kit.sandbox.stats.reset();
  await kit.apply(Things, { metadata: { name: "one" }, spec: { size: 1 } });
  await kit.until(Things, "one", (o) => o.status?.create_fn);
  await kit.logs.until("Handler 'create_fn' succeeded.");
  // The operator's writes: the kit's own requests carry the field manager kobun-testing or a name filter.
  const writes = kit.sandbox.stats.log.filter((r) => r.plural === "examples" && r.method !== "GET" && !r.query.includes("kobun-testing"));
  expect(writes.map((r) => r.method)).toEqual(["PATCH"]);
}, 30_000);

test("a handler's own write to its object through ctx.api does not come back as an update; another client's change does", async () => {
  const Things = Examples();
  const registry = new Registry();
  const updates: string[][] = [];
  registry.on.create(Things, async ({ api, name }) => {
    await api.patch(Things, name, { metadata: { labels: { stamped: "yes" } } });
    return { done: true };
  }, { id: "create_fn" });
  registry.on.update(Things, ({ diff }) => { updates.push(diff.map((d) => d.path.join("."))); return { n: updates.length }; }, { id: "update_fn" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply(Things, { metadata: { name: "own" }, spec: { size: 1 } });
  await kit.until(Things, "own", (o) => o.status?.create_fn && o.metadata.labels?.stamped === "yes");
  await kit.consistently(Things, "own", (o) => !o?.status?.update_fn, { for: 400 });
  await kit.apply(Things, { metadata: { name: "own" }, spec: { size: 2 } });
  await kit.until(Things, "own", (o) => o.status?.update_fn);
  expect(updates).toEqual([["spec.size"]]);
}, 30_000);

test("on.event: added, modified, deleted, as each event comes", async () => {
  const registry = new Registry();
  const types: string[] = [];
  const { promise: deleted, resolve } = Promise.withResolvers<void>();
  const { promise: added, resolve: resolveAdded } = Promise.withResolvers<void>();
  registry.on.event("v1/configmaps", ({ type, name }) => {
    if (name !== "ev") return;
    types.push(type);
    if (type === "added") resolveAdded();
    if (type === "deleted") resolve();
  });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "ev" }, data: { v: "1" } });
  // Seen before the next writes: on a loaded machine all three could land in one batch window.
  await within(added, 15_000, "the added event");
  await kit.apply("v1/configmaps", { metadata: { name: "ev" }, data: { v: "2" } });
  await kit.delete("v1/configmaps", "ev");
  await within(deleted, 15_000, "the deleted event");
  // The batch window may merge the two writes into one event, as Kopf's does.
  expect(types[0]).toBe("added");
  expect(types.at(-1)).toBe("deleted");
  expect(types.slice(1, -1).every((t) => t === "modified")).toBe(true);
}, 30_000);

test("errors: \"ignored\" takes a throw as a success; an optional delete handler holds no finalizer", async () => {
  const Things = Examples();
  const registry = new Registry();
  let deletes = 0;
  registry.on.create(Things, () => { throw new Error("not important"); }, { id: "careless", errors: "ignored" });
  registry.on.delete(Things, () => { deletes++; }, { id: "bye", optional: true });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply(Things, { metadata: { name: "i" }, spec: { size: 1 } });
  await kit.logs.until("Handler 'careless' failed; the error is ignored.");
  const handled = await kit.until(Things, "i", (o) => o.status?.kobun);   // the diff base: the cycle is written
  expect(handled.metadata.finalizers ?? []).toEqual([]);
  await kit.delete(Things, "i");
  await kit.gone(Things, "i");
}, 30_000);

test("a metadata-only resource: ctx.spec throws, saying why; metadata is there", async () => {
  const registry = new Registry();
  const Pods = resource("v1/configmaps", { metadataOnly: true });
  const said: string[] = [];
  registry.on.create(Pods, (ctx) => {
    said.push(ctx.name);
    try { said.push(String((ctx.spec as Record<string, unknown>).data)); } catch (e) { said.push((e as Error).message); }
    ctx.patch.metadata.labels = { seen: "yes" };
  }, { id: "meta" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "m" }, data: { secret: "no" } });
  await kit.until("v1/configmaps", "m", (o) => o.metadata.labels?.seen === "yes");
  expect(said[0]).toBe("m");
  expect(said[1]).toMatch(/configmaps is watched metadata-only .*read ctx.meta/);
}, 30_000);

test("api.apply: a field another manager owns fails with ApplyConflictError naming the path and the manager", async () => {
  const registry = new Registry();
  const conflicts: string[] = [];
  registry.on.create("v1/secrets", async ({ api, name }) => {
    try {
      await api.apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${name}-content` }, data: { page: "mine" } });
    } catch (error) {
      if (error instanceof ApplyConflictError) conflicts.push(error.message);
      else throw error;
    }
    return undefined;
  }, { id: "writer" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "s-content" }, data: { page: "theirs" } });   // owned by kobun-testing
  await kit.apply("v1/secrets", { metadata: { name: "s" }, type: "Opaque" });
  await kit.logs.until("Handler 'writer' succeeded.");
  expect(conflicts).toEqual([expect.stringContaining(".data.page (owned by kobun-testing)")]);
}, 30_000);

test("a deletion of an object kobun's finalizer holds only marks it: the running handler goes on, its result is " +
  "written, the delete handler runs after it", async () => {
  const Things = Examples();
  const registry = new Registry();
  const story: string[] = [];
  let open!: () => void;
  let running!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const started = new Promise<void>((resolve) => (running = resolve));
  registry.on.create(Things, async ({ signal }) => {
    story.push("create");
    running();
    await gate;
    story.push(`create ends, aborted: ${signal.aborted}`);
    return { made: true };
  }, { id: "create_fn" });
  registry.on.delete(Things, ({ body }) => { story.push(`delete, create_fn ${JSON.stringify(body.status?.create_fn)}`); },
    { id: "delete_fn" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply(Things, { metadata: { name: "marked" }, spec: { size: 1 } });
  await started;
  await kit.delete(Things, "marked");
  await kit.until(Things, "marked", (o) => o.metadata.deletionTimestamp);
  open();
  await kit.gone(Things, "marked");
  expect(story).toEqual(["create", "create ends, aborted: false", 'delete, create_fn {"made":true}']);
}, 30_000);

for (const kind of ["on.create", "on.reconcile"] as const) {
  test(`after a freeze nothing more is written for the ${kind} that was running: not even an Event it posts`, async () => {
    const registry = new Registry();
    const toggle = new Toggle();
    let open!: () => void;
    let running!: () => void;
    let returned!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const started = new Promise<void>((resolve) => (running = resolve));
    const ended = new Promise<void>((resolve) => (returned = resolve));
    let calls = 0;
    const fn = async ({ event }: { event: EventRecorder }) => {
      if (++calls > 1) return event.info("Again");
      running();
      await gate; // the signal is ignored on purpose
      event.info("Late", "posted after the freeze");
      returned();
    };
    if (kind === "on.create") registry.on.create("v1/configmaps", fn, { id: "create_fn" });
    else registry.on.reconcile("v1/configmaps", fn);
    await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000, toggle });
    const object = await kit.apply("v1/configmaps", { metadata: { name: "frozen" } });
    await started;
    toggle.freeze("test");
    open();
    await ended;
    toggle.unfreeze("test");
    // The resume's relist runs it again: its Event is posted after anything the first run posted.
    const events = await kit.events(object, { until: (all) => all.some((e) => e.reason === "Again") });
    expect(events.map((e) => e.reason)).not.toContain("Late");
  }, 30_000);
}
