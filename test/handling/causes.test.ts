// Causes: create, update, delete, resume, no-op — and the PATCH count of a simple create.

import { afterEach, describe, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/registry.ts";
import { TemporaryError } from "../../src/declaring/errors.ts";
import { BASE_ANNOTATION, FINALIZER } from "../../src/declaring/keys.ts";
import { startHarness, type Harness, type SettingsFile } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** PATCH requests (main or /status) to one object. */
function patchesOf(h: Harness, name: string): number {
  return h.sandbox.stats.log.filter((r) => r.method === "PATCH" && /\/(kobunexamples|kobunplains)\/([^/]+)/.exec(r.path)?.[2] === name).length;
}

/** Creates a marker object and waits until it is handled: the watch delivers in order, so every echo before it has arrived. */
async function settleAfterEcho(h: Harness, marker = "zz-marker"): Promise<void> {
  await h.create(marker, {});
  await h.until(() => h.get(marker)?.status?.create_fn);
  await h.processor.settled();
}

describe("create", () => {
  test("a simple create is exactly one PATCH (status subresource: to /status, bookkeeping in status.kobun)", async () => {
    const registry = new Registry();
    registry.on.create("kobunexamples.kobun.dev/v1", ({ name, patch }) => {
      patch.status.greeting = `hello ${name}`;
      return { message: `hello ${name}` };
    }, { id: "create_fn" });
    h = await startHarness({ registry });
    h.sandbox.stats.reset();
    await h.create("one", { size: 1 });
    const obj = await h.until(() => h!.get("one")?.status?.create_fn && h!.get("one"));
    expect(obj.status.create_fn).toEqual({ message: "hello one" });
    expect(obj.status.greeting).toBe("hello one");
    expect(JSON.parse(obj.status.kobun.lastHandledConfiguration)).toEqual({ spec: { size: 1 } });
    await settleAfterEcho(h);
    expect(patchesOf(h, "one")).toBe(1);
  });

  test("a simple create is exactly one PATCH (no status subresource: everything in one main PATCH)", async () => {
    const registry = new Registry();
    registry.on.create("kobunplains.kobun.dev/v1", ({ name }) => ({ message: `hello ${name}` }), { id: "create_fn" });
    h = await startHarness({ registry, plain: true });
    h.sandbox.stats.reset();
    await h.create("one", { size: 1 });
    const obj = await h.until(() => h!.get("one")?.status?.create_fn && h!.get("one"));
    expect(obj.status.create_fn).toEqual({ message: "hello one" });
    expect(JSON.parse(obj.metadata.annotations[BASE_ANNOTATION])).toEqual({ spec: { size: 1 } });
    await settleAfterEcho(h);
    expect(patchesOf(h, "one")).toBe(1);
  });
});

const EX = "kobunexamples.kobun.dev/v1";

describe("update", () => {
  test("a spec change runs the update handler with the diff, old and new", async () => {
    const registry = new Registry();
    const seen: any[] = [];
    registry.on.create(EX, () => undefined, { id: "c" });
    registry.on.update(EX, ({ diff, old, new: neu }) => {
      seen.push({ diff, old: old.spec, new: neu.spec });
      return { changed: diff.map((d) => d.path.join(".")) };
    }, { id: "update_fn" });
    h = await startHarness({ registry });
    await h.create("u", { size: 1, keep: "x" });
    await h.until(() => h!.get("u")?.status?.kobun?.lastHandledConfiguration);
    await h.client.patch(h.resource, "default", "u", { spec: { size: 2 } });
    const obj = await h.until(() => h!.get("u")?.status?.update_fn && h!.get("u"));
    expect(obj.status.update_fn).toEqual({ changed: ["spec.size"] });
    expect(seen).toEqual([{ diff: [{ op: "change", path: ["spec", "size"], old: 1, new: 2 }], old: { size: 1, keep: "x" }, new: { size: 2, keep: "x" } }]);
    expect(JSON.parse(obj.status.kobun.lastHandledConfiguration).spec.size).toBe(2);
  });

  test("status-only changes and kobun's own writes cause nothing (no-op)", async () => {
    const registry = new Registry();
    let updates = 0;
    registry.on.create(EX, () => ({ ok: true }), { id: "c" });
    registry.on.update(EX, () => void updates++, { id: "u" });
    h = await startHarness({ registry });
    await h.create("n", { a: 1 });
    await h.until(() => h!.get("n")?.status?.c);
    h.sandbox.stats.reset();
    await h.client.patch(h.resource, "default", "n", { status: { other: 1 } }, { subresource: "status" });
    await h.client.patch(h.resource, "default", "n", { metadata: { annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}" } } });
    await h.client.patch(h.resource, "default", "n", { metadata: { labels: { seen: "yes" } } });
    await h.until(() => updates === 1); // only the label change is an update
    await h.processor.close(1000);
    expect(updates).toBe(1);
  });
});

describe("delete", () => {
  test("a delete handler adds the finalizer before other handlers run, and removes it once done", async () => {
    const registry = new Registry();
    const order: string[] = [];
    registry.on.create(EX, ({ body }) => {
      order.push(`create finalizers=${body.metadata.finalizers?.join(",")}`);
    }, { id: "c" });
    registry.on.delete(EX, ({ name }) => void order.push(`delete ${name}`), { id: "delete_fn" });
    h = await startHarness({ registry });
    await h.create("d", {});
    await h.until(() => h!.get("d")?.status?.kobun?.lastHandledConfiguration);
    expect(h.get("d").metadata.finalizers).toEqual([FINALIZER]);
    expect(order).toEqual([`create finalizers=${FINALIZER}`]);
    await h.client.delete(h.resource, "default", "d");
    await h.until(() => h!.get("d") === undefined);
    expect(order).toEqual([`create finalizers=${FINALIZER}`, "delete d"]);
  });

  test("optional delete handlers add no finalizer; a finalizer no longer needed is removed", async () => {
    const registry = new Registry();
    registry.on.delete(EX, () => undefined, { id: "del", optional: true });
    registry.on.delete(EX, () => undefined, { id: "held", labels: { hold: "yes" } });
    h = await startHarness({ registry });
    await h.create("o", {}, { labels: { hold: "yes" } });
    await h.until(() => h!.get("o")?.metadata?.finalizers?.includes(FINALIZER));
    await h.client.patch(h.resource, "default", "o", { metadata: { labels: { hold: null } } });
    await h.until(() => h!.get("o")?.metadata?.finalizers === undefined || h!.get("o").metadata.finalizers.length === 0);
  });
});

/** An operator without resume handlers that has handled `name`: an object that exists before the next start. */
async function handledBeforeStart(name: string, meta: Record<string, any> = {}, settings: SettingsFile = {}): Promise<Harness> {
  const registry = new Registry();
  registry.on.create(EX, () => ({ done: true }), { id: "create_fn" });
  const started = await startHarness({ registry, settings });
  await started.create(name, { size: 1 }, meta);
  await started.until(() => started.get(name)?.status?.kobun?.lastHandledConfiguration);
  return started;
}

describe("resume", () => {
  test("after a restart, handled objects are a no-op without resume handlers, and resumed with them", async () => {
    const registry = new Registry();
    let creates = 0;
    registry.on.create(EX, () => void creates++, { id: "c" });
    h = await startHarness({ registry });
    await h.create("r", { a: 1 });
    await h.until(() => h!.get("r")?.status?.kobun?.lastHandledConfiguration);
    h.sandbox.stats.reset();
    const watching = h.sandbox.waitFor((r) => r.verb === "watch");
    await h.restart();
    await watching; // the LIST's objects were delivered before the WATCH began
    await h.processor.settled();
    await h.processor.close(1000);
    expect(creates).toBe(1);
    expect(h.sandbox.stats.requests("patch")).toBe(0);

    const next = new Registry();
    const resumed: string[] = [];
    next.on.create(EX, () => void creates++, { id: "c" });
    next.on.resume(EX, ({ name, reason }) => void resumed.push(`${reason} ${name}`), { id: "res" });
    await h.restart(next);
    await h.until(() => resumed.length === 1);
    expect(resumed).toEqual(["resume r"]);
    expect(creates).toBe(1);
  });

  test("an object created while the operator runs is never resumed, however often it changes", async () => {
    const registry = new Registry();
    const calls: string[] = [];
    registry.on.create(EX, ({ name }) => {
      calls.push(`create ${name}`);
      return { done: true };
    }, { id: "create_fn" });
    registry.on.update(EX, ({ name }) => void calls.push(`update ${name}`), { id: "u" });
    registry.on.resume(EX, ({ name, reason }) => void calls.push(`resume(${reason}) ${name}`), { id: "res" });
    h = await startHarness({ registry });
    await h.create("fresh", { size: 1 });
    await h.until(() => h!.get("fresh")?.status?.kobun?.lastHandledConfiguration);
    for (const size of [2, 3]) {
      await h.client.patch(h.resource, "default", "fresh", { spec: { size } });
      await h.until(() => JSON.parse(h!.get("fresh")?.status?.kobun?.lastHandledConfiguration ?? "{}").spec?.size === size);
    }
    await settleAfterEcho(h);
    expect(calls.filter((c) => c.endsWith(" fresh"))).toEqual(["create fresh", "update fresh", "update fresh"]);
  }, 20_000);

  test("a pre-existing object is resumed once per operator start, not on its later changes", async () => {
    h = await handledBeforeStart("old");

    const resumed: string[] = [];
    const updated: number[] = [];
    const next = new Registry();
    next.on.create(EX, () => ({ done: true }), { id: "create_fn" });
    next.on.update(EX, ({ new: neu }) => void updated.push(neu.spec.size), { id: "u" });
    next.on.resume(EX, ({ name, reason }) => void resumed.push(`${reason} ${name}`), { id: "res" });
    await h.restart(next);
    await h.until(() => resumed.length === 1);
    for (const size of [2, 3]) {
      await h.client.patch(h.resource, "default", "old", { spec: { size } });
      await h.until(() => updated.includes(size));
    }
    await settleAfterEcho(h);
    expect(resumed).toEqual(["resume old"]);
    expect(updated).toEqual([2, 3]);

    await h.restart(next); // a new operator process: both pre-existing objects resumed once
    await h.until(() => resumed.length === 3);
    await settleAfterEcho(h, "zz-marker-2");
    expect(resumed.slice(1).sort()).toEqual(["resume old", "resume zz-marker"]);
  }, 20_000);

  test("a resume handler that fails is retried until it succeeds, and then not run again", async () => {
    h = await handledBeforeStart("flaky", {}, { handling: { retries: null } }); // it retries: forever, not left to the default

    const attempts: number[] = [];
    const next = new Registry();
    next.on.create(EX, () => ({ done: true }), { id: "create_fn" });
    next.on.resume(EX, ({ name, retry }) => {
      if (name !== "flaky") return;
      attempts.push(retry);
      h!.poke();
      if (retry < 2) throw new TemporaryError("not yet", { delay: 0.05 });
    }, { id: "res" });
    await h.restart(next);
    await h.until(() => attempts.length === 3);
    await h.until(() => h!.get("flaky")?.status?.kobun?.progress?.res === undefined || undefined);
    await h.client.patch(h.resource, "default", "flaky", { spec: { size: 2 } });
    await h.until(() => JSON.parse(h!.get("flaky")?.status?.kobun?.lastHandledConfiguration ?? "{}").spec?.size === 2);
    await settleAfterEcho(h);
    expect(attempts).toEqual([0, 1, 2]);
  }, 20_000);

  test("an object being deleted when the operator starts is not resumed", async () => {
    h = await handledBeforeStart("leaving", { finalizers: ["example.com/hold"] });
    await h.processor.close(1000);
    await h.client.delete(h.resource, "default", "leaving");

    const resumed: string[] = [];
    const next = new Registry();
    next.on.create(EX, () => ({ done: true }), { id: "create_fn" });
    next.on.resume(EX, ({ name }) => void resumed.push(name), { id: "res" });
    await h.restart(next);
    await settleAfterEcho(h);
    expect(resumed).toEqual([]);
  }, 20_000);
});
