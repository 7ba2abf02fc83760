// The diff base (last-handled configuration) never holds a Secret's values or a field marked
// sensitive, and never grows past handling.diffBaseLimit; a bookkeeping write the API server
// refuses as too large is reported once, not retried by re-running the handlers
// (issue 11, defect 3; nolar/kopf#1087). Against the sandbox, which enforces the real limits.

import { afterEach, describe, expect, test } from "bun:test";
import { DIGEST_PREFIX } from "../../src/handling/diffbase.ts";
import { BASE_ANNOTATION } from "../../src/declaring/keys.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { MetricsRegistry } from "../../src/observability/metrics.ts";
import { reconcileMetrics } from "../../src/runtime/metrics.ts";
import type { Diff } from "../../src/declaring/types.ts";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const SECRETS = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true, statusSubresource: false };
const b64 = (text: string) => Buffer.from(text).toString("base64");

/** Everything kobun wrote onto the object, as one string to search. */
function bookkeepingText(obj: any): string {
  return JSON.stringify({ annotations: obj.metadata.annotations ?? {}, status: obj.status ?? {} });
}

function eventsAbout(h: Harness, name: string, reason: string): any[] {
  return h.sandbox.store.objects("", "events", "default").filter((e) => e.involvedObject?.name === name && e.reason === reason);
}

describe("sensitive fields", () => {
  test("a Secret's data is stored only as a digest; a change still reaches the update handler, named without values", async () => {
    const updates: Diff[] = [];
    const registry = new Registry();
    registry.on.create("secrets/v1", () => ({ seen: true }), { id: "create_fn" });
    registry.on.update("secrets/v1", ({ diff }) => {
      updates.push(diff);
    }, { id: "update_fn" });
    h = await startHarness({ registry, selector: "secrets/v1" });
    await h.client.create(SECRETS, "default", { apiVersion: "v1", kind: "Secret", metadata: { name: "creds" }, data: { password: b64("hunter2-first") } });
    const handled = await h.until(() => h!.get("creds")?.metadata.annotations?.[BASE_ANNOTATION] && h!.get("creds"));
    const base = JSON.parse(handled.metadata.annotations[BASE_ANNOTATION]);
    expect(base.data).toStartWith(DIGEST_PREFIX);
    expect(bookkeepingText(handled)).not.toContain(b64("hunter2-first"));

    await h.client.patch(SECRETS, "default", "creds", { data: { password: b64("hunter2-second") } });
    await h.until(() => updates.length > 0);
    expect(updates[0]).toEqual([{ op: "change", path: ["data"], old: undefined, new: undefined, unknown: "sensitive" }]);
    const after = await h.until(() => h!.get("creds")?.metadata.annotations?.[BASE_ANNOTATION] !== handled.metadata.annotations[BASE_ANNOTATION] && h!.get("creds"));
    expect(bookkeepingText(after)).not.toContain(b64("hunter2-second"));
  });

  test("a field a handler marks sensitive is stored as a digest, and an unchanged one is no change", async () => {
    const updates: Diff[] = [];
    const registry = new Registry();
    registry.on.create("kobunexamples.kobun.dev/v1", () => undefined, { id: "create_fn", sensitive: ["spec.password"] });
    registry.on.update("kobunexamples.kobun.dev/v1", ({ diff }) => {
      updates.push(diff);
    }, { id: "update_fn" });
    h = await startHarness({ registry });
    await h.create("db", { size: 1, password: "s3cret-value" });
    const handled = await h.until(() => h!.get("db")?.status?.kobun?.lastHandledConfiguration && h!.get("db"));
    expect(bookkeepingText(handled)).not.toContain("s3cret-value");
    expect(JSON.parse(handled.status.kobun.lastHandledConfiguration).spec).toEqual({ size: 1, password: expect.stringMatching(/^kobun\.dev\/sha256:/) });

    await h.client.patch(h.resource, "default", "db", { spec: { size: 2 } });
    await h.until(() => updates.length > 0);
    expect(updates[0]).toEqual([{ op: "change", path: ["spec", "size"], old: 1, new: 2 }]);
  });

  test("a field handler inside a Secret's data (stored as one digest) runs when the data changes, values unknown", async () => {
    const seen: { diff: Diff; old: unknown }[] = [];
    const registry = new Registry();
    registry.on.field("secrets/v1", { id: "password_fn", field: "data.password" }, ({ diff, old }) => {
      seen.push({ diff, old });
    });
    h = await startHarness({ registry, selector: "secrets/v1" });
    await h.client.create(SECRETS, "default", { apiVersion: "v1", kind: "Secret", metadata: { name: "creds" }, data: { password: b64("hunter2-first") } });
    await h.until(() => seen.length === 1);
    const sensitive = { path: [], old: undefined, new: undefined, unknown: "sensitive" as const };
    expect(seen[0]).toEqual({ diff: [{ op: "add", ...sensitive }], old: undefined });
    await h.until(() => h!.get("creds")?.metadata.annotations?.[BASE_ANNOTATION]);
    await h.client.patch(SECRETS, "default", "creds", { data: { password: b64("hunter2-second") } });
    await h.until(() => seen.length === 2);
    expect(seen[1]).toEqual({ diff: [{ op: "change", ...sensitive }], old: undefined });
  });

  test("sensitive must be a list of field paths", () => {
    const registry = new Registry();
    expect(() => registry.on.create("secrets/v1", () => undefined, { id: "bad", sensitive: "data" as never })).toThrow(/sensitive must be a list of field paths/);
  });
});

describe("large objects", () => {
  test("a base over diffBaseLimit is stored as a digest; the next change reaches update handlers with diffUnavailable", async () => {
    const seen: { diff: Diff; unavailable: boolean; old: unknown }[] = [];
    const registry = new Registry();
    registry.on.create("kobunplains.kobun.dev/v1", () => undefined, { id: "create_fn" });
    registry.on.update("kobunplains.kobun.dev/v1", ({ diff, diffUnavailable, old }) => {
      seen.push({ diff, unavailable: diffUnavailable, old });
    }, { id: "update_fn" });
    h = await startHarness({ registry, plain: true, settings: { handling: { diffBaseLimit: 4096 } } });
    await h.create("wide", { blob: "x".repeat(8000) });
    const handled = await h.until(() => h!.get("wide")?.metadata.annotations?.[BASE_ANNOTATION] && h!.get("wide"));
    expect(JSON.parse(handled.metadata.annotations[BASE_ANNOTATION])).toStartWith(DIGEST_PREFIX);

    await h.client.patch(h.resource, "default", "wide", { spec: { size: 3 } });
    await h.until(() => seen.length > 0);
    expect(seen[0]).toEqual({ diff: [{ op: "change", path: [], old: undefined, new: undefined, unknown: "too-large" }], unavailable: true, old: undefined });
  });

  test("a 900 KB custom resource (status subresource) is handled once: its bookkeeping stays small", async () => {
    let runs = 0;
    const registry = new Registry();
    registry.on.create("kobunexamples.kobun.dev/v1", () => {
      runs++;
      return { ok: true };
    }, { id: "create_fn" });
    h = await startHarness({ registry });
    await h.create("huge", { blob: "x".repeat(900 * 1024) });
    const handled = await h.until(() => h!.get("huge")?.status?.create_fn && h!.get("huge"), 10_000);
    expect(handled.status.kobun.lastHandledConfiguration.length).toBeLessThan(200);
    await h.processor.settled();
    expect(runs).toBe(1);
  });

  test("a 200 KB Secret is handled once, with no Secret data in its annotations", async () => {
    let runs = 0;
    const registry = new Registry();
    registry.on.create("secrets/v1", () => {
      runs++;
    }, { id: "create_fn" });
    h = await startHarness({ registry, selector: "secrets/v1" });
    const value = b64("k".repeat(200 * 1024)); // 200 KB of data (273 KB of base64): over the annotation limit if copied
    await h.client.create(SECRETS, "default", { apiVersion: "v1", kind: "Secret", metadata: { name: "big" }, data: { key: value } });
    const handled = await h.until(() => h!.get("big")?.metadata.annotations?.[BASE_ANNOTATION] && h!.get("big"), 10_000);
    expect(bookkeepingText(handled).length).toBeLessThan(1000);
    await h.processor.settled();
    expect(runs).toBe(1);
  });

  test("a bookkeeping write refused as too large fails for good: one Warning event, the handler is not re-run", async () => {
    let runs = 0;
    const registry = new Registry();
    registry.on.create("kobunplains.kobun.dev/v1", () => {
      runs++;
    }, { id: "create_fn" });
    const metrics = new MetricsRegistry();
    h = await startHarness({ registry, plain: true, processor: { observers: { cycles: reconcileMetrics(metrics, "kobunplains.kobun.dev", 1) } } });
    // The user's own annotations leave no room for kobun's: any bookkeeping is refused (422 Too long).
    await h.create("crowded", { size: 1 }, { annotations: { notes: "n".repeat(256 * 1024 - 100) } });
    const [event] = await h.until(() => eventsAbout(h!, "crowded", "TooLarge").length > 0 && eventsAbout(h!, "crowded", "TooLarge"));
    expect(event.type).toBe("Warning");
    expect(event.message).toContain("metadata.annotations: Too long: may not be more than 262144 bytes");
    // A retry would come after 1 s (the processor's first backoff): wait past it, bounded, to see none.
    await Bun.sleep(1500);
    expect(runs).toBe(1);
    expect(eventsAbout(h, "crowded", "TooLarge")).toHaveLength(1);
    expect(metrics.expose()).toContain("\nkobun_processing_refusals_total 1\n");

    // A change to the object is handled again (here: the crowding annotation removed).
    await h.client.patch(h.resource, "default", "crowded", { metadata: { annotations: { notes: null } } });
    await h.until(() => h!.get("crowded")?.metadata.annotations?.[BASE_ANNOTATION]);
  });
});
