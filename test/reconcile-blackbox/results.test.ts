// What a reconcile's result and errors do (docs/reconcile.md, "The function and its context"):
// `requeueAfter` and `TemporaryError(delay)` run it again after that long; a PermanentError is
// logged, posted as a Warning Event (reason Reconcile) and not retried until the next change (or a
// wake by what it owns);
// anything else retries with a per-object backoff that doubles from `reconcile.backoff.initial`
// (kobun.yaml, globally or per resource), counted in ctx.retry and reset by a success; a call past
// its `timeout` is aborted and retried; the backoff stops at `max`; on a virtual clock, `kit.advance`
// brings requeues and retries due; requeueAfter 0 (or less) is at once, and a result that is none of
// these is an error that names it.

import { expect, test } from "bun:test";
import { PermanentError, Registry, resource, TemporaryError, type ReconcileContext, type ReconcileResult } from "kobun";
import { Calls, operate, returning, Widgets } from "./kit.ts";

/** A reconcile whose first `n` calls of an object throw a plain Error ("attempt <i> failed"). */
function failsFirst(calls: Calls, n: number): (ctx: ReconcileContext<any>) => void {
  return (ctx) => {
    const attempt = calls.record(ctx);
    if (attempt < n) throw new Error(`attempt ${attempt} failed`);
  };
}

/** The gaps between successive calls, in seconds. */
const gaps = (calls: { at: number }[]) => calls.slice(1).map((c, i) => (c.at - calls[i]!.at) / 1000);

test("requeueAfter and TemporaryError's delay run it again after that long", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    const mine = calls.record(ctx);
    if (ctx.name === "requeued" && mine < 2) return { requeueAfter: 0.3 };
    if (ctx.name === "temporary" && mine < 1) throw new TemporaryError("not yet", { delay: 0.4 });
  });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "requeued" }, spec: {} });
  await kit.apply(Widgets, { metadata: { name: "temporary" }, spec: {} });
  await calls.until((c) => c.filter((x) => x.name === "requeued").length >= 3, "three runs of the requeued widget");
  await calls.until((c) => c.filter((x) => x.name === "temporary").length >= 2, "the temporary error's retry");
  for (const gap of gaps(calls.of("requeued"))) expect(gap).toBeGreaterThanOrEqual(0.29);
  expect(gaps(calls.of("temporary"))[0]).toBeGreaterThanOrEqual(0.39);
  expect(calls.of("temporary")[1]!.retry).toBe(1);
  const again = await kit.apply(Widgets, { metadata: { name: "temporary" }, spec: { size: 1 } });
  await calls.until((c) => c.some((x) => x.generation === again.metadata.generation), "the change's run");
  expect(calls.of("temporary").at(-1)!.retry).toBe(0); // the success before reset it
}, 60_000);

test("a PermanentError is posted as a Warning Event and waits for the next change, or a wake by what it owns", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    calls.record(ctx);
    if (!ctx.cache.get(resource.configmaps, `${ctx.name}-input`)) throw new PermanentError("spec.note is missing");
  }, { id: "broken", owns: [resource.configmaps] });
  await using kit = await operate(registry);
  const made = await kit.apply(Widgets, { metadata: { name: "p" }, spec: {} });
  const events = await kit.events(made, {
    until: (list) => list.some((e) => e.type === "Warning" && e.reason === "Reconcile"),
  });
  expect(events.find((e) => e.reason === "Reconcile")!.message).toContain("spec.note is missing");
  await kit.logs.until(/failed permanently/);
  // With the default backoff (5 ms) a retry would have come long before the Event: none did.
  expect(calls.of("p").length).toBe(1);
  await kit.apply(Widgets, { metadata: { name: "p", labels: { fixed: "not-yet" } }, spec: {} });
  await calls.until((c) => c.length >= 2, "the run after the change");
  const owner = { apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", name: "p", uid: made.metadata.uid!, controller: true };
  await kit.apply(resource.configmaps, { metadata: { name: "p-input", ownerReferences: [owner] } });
  await calls.until((c) => c.length >= 3, "the run woken by its child");
  expect(calls.all.map((c) => c.labels.fixed ?? "-")).toEqual(["-", "not-yet", "not-yet"]);
  expect(calls.all.map((c) => c.retry)).toEqual([0, 0, 0]); // a run after a PermanentError is not a retry
}, 60_000);

test("other errors retry per object with a doubling backoff from kobun.yaml's resources: setting", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, failsFirst(calls, 3));
  // The global backoff stays at its default (5 ms); the resource's own starts at 150 ms.
  const settings = { resources: { "widgets.blackbox.kobun.dev": { reconcile: { backoff: { initial: "150ms" } } } } };
  await using kit = await operate(registry, settings);
  await kit.apply(Widgets, { metadata: { name: "flaky" }, spec: {} });
  await calls.until((c) => c.length >= 4, "three failures and a success");
  expect(calls.all.map((c) => c.retry)).toEqual([0, 1, 2, 3]);
  const [first, second, third] = gaps(calls.all);
  expect(first).toBeGreaterThanOrEqual(0.14);
  expect(second).toBeGreaterThanOrEqual(0.29);
  expect(third).toBeGreaterThanOrEqual(0.59);
  await kit.logs.until(/attempt 2 failed/);
}, 60_000);

test("a call past its timeout is aborted through its signal and retried", async () => {
  const calls = new Calls();
  const aborted: boolean[] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    const mine = calls.record(ctx);
    if (mine > 0) return;
    await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
    aborted.push(ctx.signal.aborted);
  }, { timeout: 0.2 });
  await using kit = await operate(registry, { reconcile: { backoff: { initial: "10ms" } } });
  await kit.apply(Widgets, { metadata: { name: "slow" }, spec: {} });
  await calls.until((c) => c.length >= 2, "the retry after the timeout");
  expect(aborted).toEqual([true]);
  expect(calls.all[1]!.retry).toBe(1);
  expect(gaps(calls.all)[0]).toBeGreaterThanOrEqual(0.19);
}, 60_000);

test("the backoff stops doubling at reconcile.backoff.max", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, failsFirst(calls, 6));
  await using kit = await operate(registry, { reconcile: { backoff: { initial: "50ms", max: "100ms" } } });
  await kit.apply(Widgets, { metadata: { name: "capped" }, spec: {} });
  await calls.until((c) => c.length >= 7, "six failures and a success");
  const waits = gaps(calls.all);
  expect(waits[0]).toBeGreaterThanOrEqual(0.045);
  for (const wait of waits.slice(1)) expect(wait).toBeGreaterThanOrEqual(0.095);
  // Uncapped, the last waits would be 0.8 s and 1.6 s.
  expect(waits.slice(-2).reduce((a, b) => a + b)).toBeLessThan(1.2);
}, 60_000);

test("on a virtual clock, kit.advance() brings a requeue and a backoff due", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    const call = calls.record(ctx);
    if (call === 0) return { requeueAfter: 3600 };
    if (call === 1) throw new TemporaryError("later", { delay: 600 });
  });
  await using kit = await operate(registry, undefined, { clock: "virtual", logCapture: "debug" });
  await kit.apply(Widgets, { metadata: { name: "v" }, spec: {} });
  await calls.until((c) => c.length >= 1, "the first run");
  await kit.logs.until(/Reconciled\. .*name=v .*requeueAfter=3600s/);   // the requeue asked for, in the line
  await kit.advance(3599);
  expect(calls.all.length).toBe(1);
  await kit.advance(1);
  await calls.until((c) => c.length >= 2, "the requeue an hour later");
  await kit.advance(600);
  await calls.until((c) => c.length >= 3, "the retry ten minutes later");
  expect(calls.all[2]!.retry).toBe(1);
}, 60_000);

test("requeueAfter 0 or less runs it again at once; a result that is not one is an error naming it", async () => {
  const results: Record<string, unknown> = {
    zero: { requeueAfter: 0 }, past: { requeueAfter: -5 }, nan: { requeueAfter: NaN }, text: { requeueAfter: "5" },
    // Typed as the docs promise ("or { requeueAfter: undefined }"): the type once took only a number.
    unset: { requeueAfter: undefined } satisfies ReconcileResult,
  };
  const { calls, kit: running } = await returning(results, "results");
  await using kit = running;
  for (const name of Object.keys(results)) await kit.apply(Widgets, { metadata: { name }, spec: {} });
  const again = Object.keys(results).filter((name) => name !== "unset");
  await calls.until((c) => again.every((name) => c.filter((x) => x.name === name).length >= 2), "a second run of each");
  expect(calls.of("zero")[1]!.retry).toBe(0); // a requeue, not a retry
  expect(calls.of("nan")[1]!.retry).toBe(1);
  expect(calls.of("text")[1]!.retry).toBe(1);
  // Done, as returning nothing: not an error (logged at once when its first run ended, long before the others' second).
  expect(kit.logs.lines.filter((line) => line.includes("returned { requeueAfter: undefined }"))).toEqual([]);
  await kit.logs.until(/on\.reconcile "results" returned \{ requeueAfter: NaN \}: return nothing \(done\) or \{ requeueAfter: seconds \}/);
}, 60_000);

test("a reconcile failing again and again the same way is one Warning Event whose count grows, as client-go counts", async () => {
  // The delay is the log's ("retrying in 10ms"): in the Event it made every retry's message new.
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    if (calls.record(ctx) < 4) throw new Error("the image is not set");
  }, { id: "stuck" });
  await using kit = await operate(registry);
  const made = await kit.apply(Widgets, { metadata: { name: "s" }, spec: {} });
  await calls.until((c) => c.length >= 5, "three retries and the success");
  const events = await kit.events(made, {
    until: (list) => list.some((e) => e.reason === "Reconcile" && (e.count ?? 1) >= 4),
  });
  const warnings = events.filter((e) => e.reason === "Reconcile");
  expect(warnings.map((e) => [e.type, e.message, e.count])).toEqual([["Warning", "Reconcile 'stuck' failed: the image is not set", 4]]);
}, 60_000);
