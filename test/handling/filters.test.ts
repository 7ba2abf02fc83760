// Filters (labels, annotations, when, fields with value matchers), on.event, registration
// rules, and one-at-a-time processing of one object under a burst of events.

import { afterEach, describe, expect, test } from "bun:test";
import { ABSENT, PRESENT } from "../../src/declaring/filters.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { startHarness, type Harness } from "./harness.ts";

const EX = "kobunexamples.kobun.dev/v1";
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe("filters", () => {
  test("labels, annotations and when select handlers (PRESENT, ABSENT, values, predicates)", async () => {
    const registry = new Registry();
    const ran: string[] = [];
    const record = (what: string) => ({ name }: { name: string }) => void ran.push(`${what}:${name}`);
    registry.on.create(EX, record("app"), { id: "app", labels: { app: "x", tier: PRESENT, legacy: ABSENT } });
    registry.on.create(EX, record("env"), { id: "env", labels: { env: (v: string | undefined) => v !== "prod" } });
    registry.on.create(EX, record("ann"), { id: "ann", annotations: { owner: "me" } });
    registry.on.create(EX, record("when"), { id: "when", when: ({ spec }) => spec.size > 1 });
    h = await startHarness({ registry });
    await h.create("a", { size: 1 }, { labels: { app: "x", tier: "web" } });
    await h.create("b", { size: 2 }, { labels: { app: "x", tier: "web", legacy: "1", env: "prod" }, annotations: { owner: "me" } });
    await h.until(() => h!.get("a")?.status?.kobun?.lastHandledConfiguration && h!.get("b")?.status?.kobun?.lastHandledConfiguration);
    expect(ran.sort()).toEqual(["ann:b", "app:a", "env:a", "when:b"]);
  });

  test("field handlers run when their field changes and its values match; they see field-level old/new/diff", async () => {
    const registry = new Registry();
    const seen: any[] = [];
    registry.on.create(EX, () => undefined, { id: "c" });
    registry.on.field(EX, { field: "spec.size", new: (v: number) => v > 2 }, ({ old, new: neu, diff, reason }) => {
      seen.push({ reason, old, new: neu, diff });
    });
    h = await startHarness({ registry });
    await h.create("f", { size: 1, other: 1 });
    await h.until(() => h!.get("f")?.status?.kobun?.lastHandledConfiguration);
    await h.client.patch(h.resource, "default", "f", { spec: { other: 2 } });
    await h.until(() => JSON.parse(h!.get("f").status.kobun.lastHandledConfiguration).spec.other === 2);
    await h.client.patch(h.resource, "default", "f", { spec: { size: 3 } });
    await h.until(() => seen.length === 1 || undefined);
    expect(seen).toEqual([{ reason: "update", old: 1, new: 3, diff: [{ op: "change", path: [], old: 1, new: 3 }] }]);
  });

  test("on.event sees every processed event (deletion included) without progress or retries", async () => {
    const registry = new Registry();
    const types: string[] = [];
    registry.on.event(EX, ({ type, name }) => {
      types.push(`${type}:${name}`);
      h?.poke();
      throw new Error("event handlers are never retried");
    });
    h = await startHarness({ registry });
    await h.create("e", {});
    await h.until(() => types.length === 1); // "added", or "listed" if the LIST came after the create
    await h.client.delete(h.resource, "default", "e");
    await h.until(() => types.includes("deleted:e"));
    expect(types).toHaveLength(2);
    expect(["added:e", "listed:e"]).toContain(types[0]!);
    expect(h.get("e")).toBeUndefined();
  });

  test("ids default to the function name; duplicates are refused at registration", () => {
    const registry = new Registry();
    registry.on.create(EX, function create_fn() {});
    registry.on.update(EX, function create_fn() {}); // another cause: allowed (like stacked Kopf decorators)
    registry.on.create(EX, () => undefined);
    expect(registry.handlers.map((s) => s.id)).toEqual(["create_fn", "create_fn", "create/kobunexamples.kobun.dev/v1#2"]);
    expect(() => registry.on.create(EX, function create_fn() {})).toThrow(/already registered/);
    expect(registry.selectors()).toEqual([EX]);
  });
});

describe("one object, one cycle at a time", () => {
  test("a burst of events for one object never runs two cycles at once, and the newest version wins", async () => {
    const registry = new Registry();
    let running = 0;
    let peak = 0;
    const sizes: number[] = [];
    const track = async ({ spec }: { spec: any }) => {
      running++;
      peak = Math.max(peak, running);
      sizes.push(spec.size);
      await Bun.sleep(5); // a handler that takes a little time, so events pile up meanwhile
      running--;
      h?.poke();
    };
    registry.on.create(EX, track, { id: "c" });
    registry.on.update(EX, track, { id: "u" });
    h = await startHarness({ registry, settings: { workers: { batchWindow: 0.02, idleTimeout: 1 } } });
    await h.create("burst", { size: 0 });
    for (let i = 1; i <= 30; i++) await h.client.patch(h.resource, "default", "burst", { spec: { size: i } });
    await h.until(() => h!.get("burst")?.status?.kobun && JSON.parse(h!.get("burst").status.kobun.lastHandledConfiguration).spec.size === 30, 3000).catch((e) => {
      console.log("burst test: object and sizes seen", JSON.stringify(h!.get("burst")), sizes);
      throw e;
    });
    expect(peak).toBe(1);
    expect(sizes.length).toBeLessThan(31); // bursts were merged
    expect(sizes.at(-1)).toBe(30);
  });
});
