// docs/handlers.md and docs/filters.md, as a user reads them: results at status.<id>, ids from the
// function's name, outcomes posted as `Logging` Events, PermanentError never retried, a field
// handler on the creation too, an update handler with a field only when the change touches it,
// and label predicates that get the handler's context. Only the public entry points are used.

import { expect, test } from "bun:test";
import Type from "typebox";
import { ABSENT, defineResource, PermanentError, PRESENT, Registry, TemporaryError } from "kobun";
import { startOperator } from "kobun/testing";

function sites() {
  const Sites = defineResource({
    group: "blackbox.kobun.dev", kind: "Site", plural: "sites",
    schema: {
      spec: Type.Object({ size: Type.Integer(), mode: Type.Optional(Type.String()), tags: Type.Optional(Type.Array(Type.String())) }),
      status: Type.Record(Type.String(), Type.Unknown()),
    },
  });
  return { Sites, registry: new Registry() };
}

test("a status that is a map of anything has room for kobun's keys; a map of a narrower type is refused, saying why", () => {
  const spec = Type.Object({});
  expect(() => defineResource({ group: "blackbox.kobun.dev", kind: "Tally", plural: "tallies",
    schema: { spec, status: Type.Record(Type.String(), Type.Integer()) } })).toThrow(/status: a map .* leaves no room for kobun's status\.kobun/);
});

test("a result lands at status.<id>, the id defaults to the function's name, and success is a Normal `Logging` Event", async () => {
  const { Sites, registry } = sites();
  registry.on.create(Sites, function greet({ name, status, runtime }) {
    return { message: `hello ${name}`, statusWasObject: typeof status === "object", runtimeIsNumber: typeof runtime === "number" };
  });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  const site = await kit.apply(Sites, { metadata: { name: "a" }, spec: { size: 1 } });
  const done = await kit.until(Sites, "a", (o) => o.status?.greet);
  expect(done.status?.greet).toEqual({ message: "hello a", statusWasObject: true, runtimeIsNumber: true });
  await kit.logs.until("Handler 'greet' succeeded.");
  const events = await kit.events(site, { until: (list) => list.some((e) => e.reason === "Logging") });
  expect(events.find((e) => e.reason === "Logging")?.type).toBe("Normal");
}, 30_000);

test("an anonymous handler's id is its kind, resource and place among those registered", async () => {
  const { Sites, registry } = sites();
  registry.on.create(Sites, () => ({ first: true }));
  registry.on.create(Sites, () => ({ second: true }));
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply(Sites, { metadata: { name: "anon" }, spec: { size: 1 } });
  const done = await kit.until(Sites, "anon", (o) => o.status?.["create/sites.blackbox.kobun.dev/v1#2"]);
  expect(done.status?.["create/sites.blackbox.kobun.dev/v1#1"]).toEqual({ first: true });
  expect(done.status?.["create/sites.blackbox.kobun.dev/v1#2"]).toEqual({ second: true });
}, 30_000);

test("a PermanentError is not retried: the failure stays, posted as a Warning `Logging` Event", async () => {
  const { Sites, registry } = sites();
  let calls = 0;
  registry.on.create(Sites, () => {
    calls++;
    throw new PermanentError("spec.size must be a number");
  }, { id: "create_fn", backoff: 0.1 });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  const site = await kit.apply(Sites, { metadata: { name: "p" }, spec: { size: 1 } });
  const events = await kit.events(site, { until: (list) => list.some((e) => e.type === "Warning" && e.reason === "Logging") });
  expect(events.find((e) => e.type === "Warning")?.message).toContain("spec.size must be a number");
  // Were it retried, a 0.1 s backoff would call it again well within this window.
  await kit.consistently(Sites, "p", () => calls === 1, { for: 500 });
}, 30_000);

test("retries counts attempts: a failing handler with retries: 3 is called three times, then fails for good", async () => {
  const { Sites, registry } = sites();
  const attempts: number[] = [];
  registry.on.create(Sites, ({ retry }) => {
    attempts.push(retry);
    throw new Error("boom");
  }, { id: "flaky", retries: 3, backoff: 0.1 });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  const site = await kit.apply(Sites, { metadata: { name: "r" }, spec: { size: 1 } });
  await kit.events(site, { until: (list) => list.some((e) => e.type === "Warning" && /fail/i.test(e.message ?? "") && e.message!.includes("3")) });
  await kit.consistently(Sites, "r", () => attempts.length === 3, { for: 500 });
  expect(attempts).toEqual([0, 1, 2]);
}, 30_000);

test("a TemporaryError's delay of 0 or less retries at once, not after the handler's backoff", async () => {
  const { Sites, registry } = sites();
  const attempts: number[] = [];
  registry.on.create(Sites, ({ retry }) => {
    attempts.push(retry);
    if (retry === 0) throw new TemporaryError("not yet", { delay: -30 });
  }, { id: "again", backoff: 600 });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply(Sites, { metadata: { name: "t" }, spec: { size: 1 } });
  // The backoff (600 s) is far past this test's bound: only an at-once retry lets the second attempt in.
  await kit.logs.until("Handler 'again' succeeded.");
  expect(attempts).toEqual([0, 1]);
}, 30_000);

test("on.field runs on the creation (old undefined); on.update with a field runs only when the change touches it", async () => {
  const { Sites, registry } = sites();
  const fieldCalls: unknown[] = [];
  const updateCalls: unknown[] = [];
  registry.on.field(Sites, { id: "size", field: "spec.size" }, ({ old, new: now }) => {
    fieldCalls.push([old, now]);
    return { from: old ?? null, to: now };
  });
  registry.on.update(Sites, ({ old, new: now, diff }) => {
    updateCalls.push({ old, now, diff: diff.map((d) => [d.op, d.path]) });
    return { calls: updateCalls.length };
  }, { id: "mode", field: "spec.mode" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply(Sites, { metadata: { name: "f" }, spec: { size: 1 } });
  await kit.until(Sites, "f", (o) => o.status?.size);
  expect(fieldCalls).toEqual([[undefined, 1]]);
  await kit.apply(Sites, { metadata: { name: "f" }, spec: { size: 2 } });        // mode untouched
  await kit.until(Sites, "f", (o) => (o.status?.size as { to?: number } | undefined)?.to === 2);
  await kit.apply(Sites, { metadata: { name: "f" }, spec: { size: 2, mode: "fast" } });
  await kit.until(Sites, "f", (o) => o.status?.mode);
  // diff paths are relative to the field: the field itself is path []
  expect(updateCalls).toEqual([{ old: undefined, now: "fast", diff: [["add", []]] }]);
}, 30_000);

test("filters: values, PRESENT, ABSENT, predicates of (value, ctx), `field`/`value` compared by value", async () => {
  const { Sites, registry } = sites();
  const seen: string[] = [];
  registry.on.create(Sites, ({ name }) => { seen.push(name); return { ok: true }; }, {
    id: "labelled",
    labels: {
      "example": "site",
      "team": PRESENT,
      "paused": ABSENT,
      "size": (v, { spec }) => v === "big" && (spec.size as number) > 3,
    },
    field: "spec.tags", value: ["a", "b"],
  });
  registry.on.create(Sites, () => ({ ok: true }), { id: "all" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  const labels = { example: "site", team: "x", size: "big" };
  await kit.apply(Sites, { metadata: { name: "yes", labels }, spec: { size: 5, tags: ["a", "b"] } });
  await kit.apply(Sites, { metadata: { name: "paused", labels: { ...labels, paused: "1" } }, spec: { size: 5, tags: ["a", "b"] } });
  await kit.apply(Sites, { metadata: { name: "small", labels }, spec: { size: 2, tags: ["a", "b"] } });
  await kit.apply(Sites, { metadata: { name: "noteam", labels: { example: "site", size: "big" } }, spec: { size: 5, tags: ["a", "b"] } });
  await kit.apply(Sites, { metadata: { name: "tags", labels }, spec: { size: 5, tags: ["b", "a"] } });
  await kit.until(Sites, "yes", (o) => o.status?.labelled);
  for (const name of ["paused", "small", "noteam", "tags"]) {
    const other = await kit.until(Sites, name, (o) => o.status?.all);
    expect(other.status?.labelled).toBeUndefined();
  }
  expect(seen).toEqual(["yes"]);
}, 30_000);

test("a change made while a cause is unfinished joins it: a handler done for it is not called again, the diff base is the newest", async () => {
  const { Sites, registry } = sites();
  const done: unknown[] = [];
  const waiting: unknown[] = [];
  registry.on.update(Sites, ({ spec }) => { done.push([spec.size, spec.mode]); return { ok: true }; }, { id: "done" });
  registry.on.update(Sites, ({ spec }) => {
    waiting.push([spec.size, spec.mode]);
    if (spec.mode !== "go") throw new TemporaryError("not yet", { delay: 0.2 });
    return { ok: true };
  }, { id: "waiting" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  const base = (o: { status?: Record<string, unknown> }) => (o.status?.kobun as { lastHandledConfiguration?: string })
    ?.lastHandledConfiguration;
  await kit.apply(Sites, { metadata: { name: "j" }, spec: { size: 1 } });
  await kit.until(Sites, "j", (o) => base(o));
  await kit.apply(Sites, { metadata: { name: "j" }, spec: { size: 2 } });
  await kit.until(Sites, "j", (o) => o.status?.done);                // done; "waiting" waits out its retry
  await kit.apply(Sites, { metadata: { name: "j" }, spec: { size: 2, mode: "go" } });
  const end = await kit.until(Sites, "j", (o) => o.status?.waiting);
  expect(done).toEqual([[2, undefined]]);
  expect(waiting.at(-1)).toEqual([2, "go"]);
  expect(JSON.parse(base(end)!)).toEqual({ spec: { size: 2, mode: "go" } });
}, 30_000);
