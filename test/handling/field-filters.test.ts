// Filters as Kopf's (issue 33): label and annotation predicates get the value and the handler's
// context; `field`/`value` on create, update (with old/new), delete, resume and on.event, against
// the sandbox through the real watch and handler cycle.

import { afterEach, expect, test } from "bun:test";
import { ABSENT, PRESENT } from "../../src/declaring/filters.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { startHarness, type Harness } from "./harness.ts";

const EX = "kobunexamples.kobun.dev/v1";
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const handled = (name: string) => h!.get(name)?.status?.kobun?.lastHandledConfiguration;
const baseOf = (name: string) => JSON.parse(h!.get(name).status.kobun.lastHandledConfiguration);

test("label and annotation predicates get the value and the handler's context (spec, name, reason, old/new)", async () => {
  const registry = new Registry();
  const seen: unknown[] = [];
  registry.on.create(EX, () => void seen.push("created:big"), {
    id: "big", labels: { app: (value, { spec, name, reason, meta }) => {
      seen.push({ value, name, reason, size: spec.size, uid: typeof meta.uid });
      return value === "web" && spec.size > 1;
    } },
  });
  registry.on.create(EX, () => void seen.push("created:value-only"), {
    id: "valueOnly", labels: { app: (value: string | undefined) => value === "web" }, // a predicate of the value alone
  });
  registry.on.update(EX, () => void seen.push("updated"), {
    id: "upd", annotations: { note: (value, ctx) => value === "x" && ctx.old?.spec?.size === 2 && ctx.new?.spec?.size === 3 },
  });
  h = await startHarness({ registry });
  await h.create("small", { size: 1 }, { labels: { app: "web" } });
  await h.create("large", { size: 2 }, { labels: { app: "web" }, annotations: { note: "x" } });
  await h.until(() => handled("small") && handled("large"));
  expect(seen).toContainEqual({ value: "web", name: "small", reason: "create", size: 1, uid: "string" });
  expect(seen).toContainEqual({ value: "web", name: "large", reason: "create", size: 2, uid: "string" });
  expect(seen.filter((s) => s === "created:big")).toHaveLength(1);
  expect(seen.filter((s) => s === "created:value-only")).toHaveLength(2);
  await h.client.patch(h.resource, "default", "large", { spec: { size: 3 } });
  await h.until(() => seen.includes("updated") || undefined);
  await h.client.patch(h.resource, "default", "small", { spec: { size: 5 } }); // no annotation: not run
  await h.until(() => baseOf("small").spec.size === 5);
  expect(seen.filter((s) => s === "updated")).toHaveLength(1);
});

test("field/value on creation: equal, PRESENT (no value), ABSENT, a predicate of the value and the context", async () => {
  const registry = new Registry();
  const ran: string[] = [];
  const record = (id: string) => ({ name }: { name: string }) => void ran.push(`${id}:${name}`);
  registry.on.create(EX, record("fast"), { id: "fast", field: "spec.mode", value: "fast" });
  registry.on.create(EX, record("hasMode"), { id: "hasMode", field: "spec.mode" });
  registry.on.create(EX, record("noMode"), { id: "noMode", field: ["spec", "mode"], value: ABSENT });
  registry.on.create(EX, record("pred"), {
    id: "pred", field: "spec.size", value: (size, { labels }) => size > 1 && labels.team === "a",
  });
  registry.on.create(EX, () => undefined, { id: "all" });
  h = await startHarness({ registry });
  await h.create("a", { mode: "fast", size: 2 }, { labels: { team: "a" } });
  await h.create("b", { mode: "slow", size: 2 });
  await h.create("c", { size: 1 });
  await h.until(() => handled("a") && handled("b") && handled("c"));
  expect(ran.sort()).toEqual(["fast:a", "hasMode:a", "hasMode:b", "noMode:c", "pred:a"]);
});

test("on.update with field: skipped unless the change touches it; old/new/diff are the field's; value matches either side", async () => {
  const registry = new Registry();
  const seen: unknown[] = [];
  registry.on.update(EX, ({ old, new: neu, diff }) => void seen.push({ id: "mode", old, new: neu, diff }), {
    id: "mode", field: "spec.mode",
  });
  registry.on.update(EX, ({ old, new: neu }) => void seen.push({ id: "fast", old, new: neu }), {
    id: "fast", field: "spec.mode", value: "fast", // reached or left
  });
  registry.on.update(EX, () => void seen.push({ id: "slowed" }), { id: "slowed", field: "spec.mode", old: "fast", new: "slow" });
  registry.on.update(EX, () => void seen.push({ id: "removed" }), {
    id: "removed", field: "spec.mode", old: PRESENT, new: ABSENT,
  });
  h = await startHarness({ registry });
  await h.create("u", { mode: "fast", other: 1 });
  await h.until(() => handled("u"));
  await h.client.patch(h.resource, "default", "u", { spec: { other: 2 } }); // touches another field
  await h.until(() => baseOf("u").spec.other === 2);
  expect(seen).toEqual([]);
  await h.client.patch(h.resource, "default", "u", { spec: { mode: "slow" } });
  await h.until(() => baseOf("u").spec.mode === "slow");
  expect(seen).toEqual([
    { id: "mode", old: "fast", new: "slow", diff: [{ op: "change", path: [], old: "fast", new: "slow" }] },
    { id: "fast", old: "fast", new: "slow" }, // the old side matched: "fast" was left
    { id: "slowed" },
  ]);
  seen.length = 0;
  await h.client.patch(h.resource, "default", "u", { spec: { mode: null } });
  await h.until(() => baseOf("u").spec.mode === undefined);
  expect(seen).toEqual([
    { id: "mode", old: "slow", new: undefined, diff: [{ op: "remove", path: [], old: "slow", new: undefined }] },
    { id: "removed" },
  ]);
});

test("on.delete with field/value: only matching objects are held and handled; others go at once", async () => {
  const registry = new Registry();
  const deleted: string[] = [];
  registry.on.create(EX, () => undefined, { id: "c" });
  registry.on.delete(EX, ({ name }) => void deleted.push(name), { id: "d", field: "spec.keep", value: true });
  h = await startHarness({ registry });
  await h.create("kept", { keep: true });
  await h.create("free", { keep: false });
  await h.until(() => handled("kept") && handled("free"));
  expect(h.get("kept").metadata.finalizers).toContain("kobun.dev/finalizer");
  expect(h.get("free").metadata.finalizers ?? []).not.toContain("kobun.dev/finalizer");
  await h.client.delete(h.resource, "default", "free");
  await h.client.delete(h.resource, "default", "kept");
  await h.until(() => (!h!.get("kept") && !h!.get("free")) || undefined);
  expect(deleted).toEqual(["kept"]);
});

test("on.resume and on.event with field/value see the object as it is", async () => {
  const registry = new Registry();
  const events: string[] = [];
  registry.on.create(EX, () => undefined, { id: "c" });
  registry.on.event(EX, ({ name, type }) => void events.push(`${type}:${name}`), { id: "e", field: "spec.watched", value: "yes" });
  h = await startHarness({ registry });
  await h.create("r1", { watched: "yes" });
  await h.create("r2", { watched: "no" });
  await h.until(() => handled("r1") && handled("r2"));
  expect(events.every((e) => e.endsWith(":r1"))).toBe(true);
  expect(events.length).toBeGreaterThan(0);

  const resumed: string[] = [];
  const next = new Registry();
  next.on.create(EX, () => undefined, { id: "c" });
  next.on.resume(EX, ({ name }) => {
    resumed.push(name);
    h?.poke();
  }, { id: "res", field: "spec.watched", value: (v: string) => v === "yes" });
  next.on.resume(EX, ({ name }) => {
    resumed.push(`all:${name}`);
    h?.poke();
  }, { id: "all" });
  await h.restart(next);
  await h.until(() => (resumed.includes("all:r1") && resumed.includes("all:r2")) || undefined);
  expect(resumed.filter((r) => !r.startsWith("all:"))).toEqual(["r1"]);
});

test("registration: value, old or new without a field, and a malformed field, are refused with the fix", () => {
  const registry = new Registry();
  expect(() => registry.on.create(EX, () => undefined, { id: "x", value: "a" })).toThrow(
    'create handler x: value matches the value at a field: add { field: "spec.x" }',
  );
  expect(() => registry.on.update(EX, () => undefined, { id: "y", new: ABSENT })).toThrow(/update handler y: new matches/);
  expect(() => registry.on.daemon(EX, () => undefined, { id: "z", field: "" })).toThrow(
    'daemon z: field must be a dotted path like "spec.size" or a list of keys like ["spec", "a.b"]',
  );
  expect(() => registry.on.index(EX, () => undefined, { id: "i", field: ["spec", ""] })).toThrow(/index i: field must be/);
  registry.on.timer(EX, () => undefined, { id: "t", interval: 1, field: "spec.a.b" });
  expect(registry.background[0]!.field).toEqual(["spec", "a", "b"]);
});
