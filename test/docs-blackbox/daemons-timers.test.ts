// docs/daemons.md, indexes.md, README "Daemons, timers and indexes", api.md's Daemon*/Timer*/Index*: initialDelay
// (a timer's spread), sleep woken by a stop, a daemon's restart backoff, retries, errors; cancellationTimeout on a
// deaf daemon and timer; a patch after `stopped`, not after `signal`; a freeze skipping cancellationBackoff; sharp,
// an overrun; a failing timer's retries; finalizer: false; filters re-matching; index filters, size, iteration.

import { expect, test } from "bun:test";
import Type from "typebox";
import { defineResource, now, PermanentError, Registry, sleep, TemporaryError, Toggle, type Index } from "kobun";
import { startOperator } from "kobun/testing";
import { within } from "./helpers.ts";

const Things = () => defineResource({
  group: "timers.blackbox.kobun.dev", kind: "Thing", plural: "things",
  schema: { spec: Type.Object({}), status: Type.Record(Type.String(), Type.Any()) },
});
const quiet = { logLevel: "silent", timeout: 15_000 } as const;
const abortOf = (signal: AbortSignal) =>
  new Promise<void>((resolve) => signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve()));
const held = (o: { metadata: { finalizers?: string[] } }) => o.metadata.finalizers?.length;
const only = (n: string) => ({ when: ({ name }: { name: string }) => name === n });

test("virtual clock: a daemon's initialDelay, a timer's initialDelay plus a spread under 1 s, sleep woken by a delete",
  async () => {
    const registry = new Registry();
    let t0 = 0; const at = () => (now().getTime() - t0) / 1000;
    const [daemonStarts, slept, ticks] = [[] as number[], [] as boolean[], [] as number[]];
    registry.on.daemon("v1/configmaps", async ({ stopped }) => {
      daemonStarts.push(at());
      slept.push(await sleep(3600, stopped));                    // false as soon as it is asked to stop
    }, { id: "late", initialDelay: 10 });
    registry.on.timer("v1/configmaps", () => { ticks.push(at()); }, { id: "tick", interval: 30, initialDelay: 20 });
    await using kit = await startOperator({ registry, clock: "virtual", ...quiet });
    t0 = kit.now().getTime();
    await kit.apply("v1/configmaps", { metadata: { name: "c" } });
    await kit.until("v1/configmaps", "c", held);
    await kit.advance(9.5);
    expect(daemonStarts).toEqual([]);
    await kit.advance(0.5);
    expect(daemonStarts).toEqual([10]);
    await kit.advance(80);
    expect(ticks.length === 3 && ticks[0]! >= 20 && ticks[0]! <= 21).toBe(true);
    expect(ticks.map((t) => Math.round(t - ticks[0]!))).toEqual([0, 30, 60]);
    await kit.delete("v1/configmaps", "c");                     // no advance: the sleep must wake by itself
    await kit.gone("v1/configmaps", "c");
    expect(slept).toEqual([false]);
  }, 30_000);

test("virtual clock: a daemon's throw restarts it after backoff (60 s default; a TemporaryError's delay wins) up to "
  + "`retries` runs; PermanentError, errors: permanent/ignored and a return are not restarted", async () => {
  const registry = new Registry();
  let t0 = 0; const runs: Record<string, [number, number][]> = {};
  const daemon = (id: string, fail: (retry: number) => unknown, opts: object = {}) =>
    registry.on.daemon("v1/configmaps", ({ retry }) => {
      (runs[id] ??= []).push([(now().getTime() - t0) / 1000, retry]);
      return fail(retry);
    }, { id, ...opts });
  daemon("plain", () => { throw new Error("boom"); }, { retries: 3 });
  daemon("backoff", () => { throw new Error("boom"); }, { backoff: 5, retries: 2 });
  daemon("delayed", (r) => { if (r === 0) throw new TemporaryError("soon", { delay: 2 }); }, { backoff: 50 });
  daemon("permanent", () => { throw new PermanentError("no"); });
  daemon("errPermanent", () => { throw new Error("no"); }, { errors: "permanent" });
  daemon("errIgnored", () => { throw new Error("no"); }, { errors: "ignored" });
  daemon("returns", () => ({ done: true }));
  await using kit = await startOperator({ registry, clock: "virtual", ...quiet, logCapture: "info" });
  t0 = kit.now().getTime();
  await kit.apply("v1/configmaps", { metadata: { name: "d" } });
  await kit.until("v1/configmaps", "d", held);
  await kit.logs.until("Daemon 'returns' succeeded.");
  await kit.advance(300);
  expect(runs).toEqual({ plain: [[0, 0], [60, 1], [120, 2]], backoff: [[0, 0], [5, 1]], delayed: [[0, 0], [2, 1]],
    permanent: [[0, 0]], errPermanent: [[0, 0]], errIgnored: [[0, 0]], returns: [[0, 0]] });
}, 30_000);

test("a daemon and a timer deaf to their signal are abandoned cancellationTimeout after it, named in a warning; "
  + "the deletion then completes and the delete handler runs once", async () => {
  const registry = new Registry();
  const [{ promise: never, resolve: release }, { promise: ticking, resolve: ticked }] = [Promise.withResolvers<void>(),
    Promise.withResolvers<void>()];
  let deletes = 0;
  registry.on.daemon("v1/configmaps", async () => { await never; }, { id: "deafDaemon", cancellationTimeout: 0.5 });
  const deafTimer = { id: "deafTimer", interval: 0.1, cancellationTimeout: 0.5 };  // "(both)"; not in TimerOptions
  registry.on.timer("v1/configmaps", async () => { ticked(); await never; }, deafTimer);
  registry.on.delete("v1/configmaps", () => { deletes++; }, { id: "del" });
  await using kit = await startOperator({ registry, ...quiet, logCapture: "warn" });
  try {
    await kit.apply("v1/configmaps", { metadata: { name: "deaf" } });
    await within(ticking, 15_000, "the timer's first call");
    // The timer starts with the object's first event, the finalizer's PATCH beside it: on a loaded machine a
    // deletion sent before that PATCH lands removes the object at once (nothing holds it yet).
    await kit.until("v1/configmaps", "deaf", (o) => (o.metadata.finalizers?.length ?? 0) > 0);
    const asked = performance.now();
    await kit.delete("v1/configmaps", "deaf");
    await kit.gone("v1/configmaps", "deaf");
    expect(performance.now() - asked).toBeWithin(450, 4_000);         // 0.5 s each, not the default 5 s
    await Promise.all([kit.logs.until(/deafDaemon/), kit.logs.until(/deafTimer/)]);
    expect(deletes).toBe(1);
  } finally { release(); }
}, 30_000);

test("stopping to match: a daemon returning within its cancellationBackoff has its patch and result written, "
  + "one that goes on after ctx.signal aborted does not; matching again starts it again", async () => {
  const [Things_, registry] = [Things(), new Registry()];
  const starts: Record<string, number> = {};
  const { promise: again, resolve: startedAgain } = Promise.withResolvers<void>();
  const count = (id: string) => (starts[id] = (starts[id] ?? 0) + 1, starts.quick === 2 && starts.late === 2
    && startedAgain());
  const daemon = (id: string, waits: "stopped" | "signal", cancellationBackoff: number) =>
    registry.on.daemon(Things_, async (ctx) => {
      count(id);
      await abortOf(ctx[waits]);
      ctx.patch.status[`${id}Saw`] = waits;
      return { by: id };
    }, { id, cancellationBackoff, labels: { run: "yes" } });
  daemon("quick", "stopped", 5);                                // returns within its backoff
  daemon("late", "signal", 0);                                  // goes on after its signal aborted
  await using kit = await startOperator({ registry, ...quiet });
  await kit.apply(Things_, { metadata: { name: "t", labels: { run: "yes" } }, spec: {} });
  await kit.until(Things_, "t", held);
  await kit.apply(Things_, { metadata: { name: "t", labels: { run: "no" } }, spec: {} });
  const done = await kit.until(Things_, "t", (o) => o.status?.quick);
  expect(done.status).toMatchObject({ quick: { by: "quick" }, quickSaw: "stopped" });
  await kit.consistently(Things_, "t", (o) => !o?.status?.late && !o?.status?.lateSaw, { for: 500 });
  await kit.apply(Things_, { metadata: { name: "t", labels: { run: "yes" } }, spec: {} });
  await within(again, 15_000, "both daemons started again once the object matches again");
}, 30_000);

test("a freeze aborts a daemon's stopped and signal together (no cancellationBackoff), stops its timer; "
  + "the unfreeze starts the daemon again and the timer ticks again", async () => {
  const [registry, toggle] = [new Registry(), new Toggle()];
  const stops: [boolean, boolean][] = [];
  let [ticks, starts] = [0, 0];
  const { promise: stoppedOnce, resolve: stoppedNow } = Promise.withResolvers<void>();
  const { promise: restarted, resolve: restart } = Promise.withResolvers<void>();
  registry.on.daemon("v1/configmaps", async ({ stopped, signal }) => {
    if (++starts === 2) restart();
    await abortOf(stopped);
    stops.push([stopped.aborted, signal.aborted]);             // the backoff is skipped: both at once
    stoppedNow();
    if (starts === 1) await abortOf(signal);                   // (the second run ends at the kit's stop)
  }, { id: "d", cancellationBackoff: 30 });
  registry.on.timer("v1/configmaps", () => { ticks++; }, { id: "t", interval: 10 });
  await using kit = await startOperator({ registry, clock: "virtual", toggle, ...quiet });
  await kit.apply("v1/configmaps", { metadata: { name: "f" } });
  await kit.until("v1/configmaps", "f", held);
  await kit.advance(25);
  const before = ticks;
  expect(before).toBeGreaterThanOrEqual(2);
  toggle.freeze("test", "maintenance");
  await within(stoppedOnce, 15_000, "the daemon asked to stop by the freeze");
  expect(stops).toEqual([[true, true]]);
  await kit.advance(100);
  expect(ticks).toBe(before);
  toggle.unfreeze("test");
  await within(restarted, 15_000, "the daemon started again after the unfreeze");
  await kit.advance(30);
  expect(ticks).toBeGreaterThan(before);
}, 30_000);

test("virtual clock: sharp keeps every `interval` from the first call; not sharp waits `interval` after a call; "
  + "a sharp call that overran skips the ticks it covered", async () => {
  const registry = new Registry();
  let t0 = 0;
  const calls: Record<string, number[]> = { sharp: [], loose: [], overrun: [] };
  const timer = (id: string, takes: number, sharp: boolean) => registry.on.timer("v1/configmaps", async (ctx) => {
    calls[id]!.push((now().getTime() - t0) / 1000);
    await sleep(takes, ctx.signal);
  }, { id, interval: 10, sharp, ...only(id) });
  timer("sharp", 4, true);
  timer("loose", 4, false);
  timer("overrun", 25, true);
  await using kit = await startOperator({ registry, clock: "virtual", ...quiet });
  t0 = kit.now().getTime();
  for (const name of ["sharp", "loose", "overrun"]) await kit.apply("v1/configmaps", { metadata: { name } });
  for (const name of ["sharp", "loose", "overrun"]) await kit.until("v1/configmaps", name, held);
  await kit.advance(71);                                        // the first calls come within their spread (1 s)
  const relative = (id: string) => calls[id]!.map((t) => Math.round(t - calls[id]![0]!));
  expect(relative("sharp")).toEqual([0, 10, 20, 30, 40, 50, 60, 70]);
  expect(relative("loose")).toEqual([0, 14, 28, 42, 56, 70]);
  expect(relative("overrun")).toEqual([0, 30, 60]);
}, 30_000);

test("virtual clock: a failing timer retries after `backoff` up to `retries` attempts of one call, a TemporaryError's "
  + "delay wins, a PermanentError is not retried; the next call comes an interval later; ctx.started is the call's",
async () => {
  const registry = new Registry();
  const seen: Record<string, [number, number, number][]> = { failing: [], delayed: [], permanent: [] };
  const timer = (id: string, fail: (retry: number) => void, opts: object) =>
    registry.on.timer("v1/configmaps", ({ retry, started }) => {
      seen[id]!.push([now().getTime() / 1000, retry, started.getTime() / 1000]);
      fail(retry);
    }, { id, interval: 60, ...only(id), ...opts });
  timer("failing", () => { throw new Error("down"); }, { backoff: 5, retries: 3 });
  timer("delayed", (r) => { if (r === 0) throw new TemporaryError("soon", { delay: 2 }); }, { backoff: 50 });
  timer("permanent", () => { throw new PermanentError("no"); }, { backoff: 5 });
  await using kit = await startOperator({ registry, clock: "virtual", ...quiet });
  for (const name of Object.keys(seen)) await kit.apply("v1/configmaps", { metadata: { name } });
  for (const name of Object.keys(seen)) await kit.until("v1/configmaps", name, held);
  await kit.advance(141);
  const shift = (id: string) => seen[id]!.map(([at, retry, started]) =>
    [Math.round(at - seen[id]![0]![0]), retry, Math.round(started - seen[id]![0]![0])]);
  const attempts = (id: string) => shift(id).filter(([at]) => at! < 140).map(([at, retry]) => [at, retry]);
  expect(attempts("failing")).toEqual([[0, 0], [5, 1], [10, 2], [70, 0], [75, 1], [80, 2]]);
  expect(attempts("delayed")).toEqual([[0, 0], [2, 1], [62, 0], [64, 1], [124, 0], [126, 1]]);
  expect(attempts("permanent")).toEqual([[0, 0], [60, 0], [120, 0]]);
  // TimerContext.started: "When this call's first attempt started."
  expect(shift("failing").slice(0, 3).map(([, , started]) => started)).toEqual([0, 0, 0]);
}, 30_000);

test("finalizer: false: a daemon and a timer hold no finalizer, and the deletion still stops the daemon", async () => {
  const registry = new Registry();
  const [{ promise: running, resolve: started }, { promise: ended, resolve: end }] = [Promise.withResolvers<void>(),
    Promise.withResolvers<void>()];
  registry.on.daemon("v1/configmaps", async ({ signal }) => { started(); await abortOf(signal); end(); },
    { id: "free", finalizer: false });
  registry.on.timer("v1/configmaps", () => ({ ok: true }), { id: "loose", interval: 0.1, finalizer: false });
  await using kit = await startOperator({ registry, ...quiet });
  await kit.apply("v1/configmaps", { metadata: { name: "free" } });
  await within(running, 15_000, "the daemon's start");
  await kit.consistently("v1/configmaps", "free", (o) => !o?.metadata.finalizers?.length, { for: 300 });
  await kit.delete("v1/configmaps", "free");
  await kit.gone("v1/configmaps", "free", { timeout: 2_000 });
  await within(ended, 15_000, "the daemon's stop after the deletion");
}, 30_000);

test("a timer call in progress holds the deletion: its signal aborts, it ends, then the delete handler runs once",
  async () => {
    const registry = new Registry();
    const [order, { promise: calling, resolve: called }] = [[] as string[], Promise.withResolvers<void>()];
    registry.on.timer("v1/configmaps", async ({ signal }) => {
      order.push("call");
      called();
      order.push(`woke ${await sleep(3600, signal)}`);
    }, { id: "long", interval: 0.1 });
    registry.on.delete("v1/configmaps", () => { order.push("delete"); }, { id: "del" });
    await using kit = await startOperator({ registry, ...quiet });
    await kit.apply("v1/configmaps", { metadata: { name: "busy" } });
    await within(calling, 15_000, "the timer's first call");
    await kit.delete("v1/configmaps", "busy");
    await kit.gone("v1/configmaps", "busy");
    expect(order).toEqual(["call", "woke false", "delete"]);
  }, 30_000);

test("virtual clock: a timer with field/value ticks only while the field matches, again once it matches again",
  async () => {
    const registry = new Registry();
    let ticks = 0;
    registry.on.timer("v1/configmaps", () => { ticks++; }, { id: "t", interval: 10, field: "data.mode", value: "on" });
    await using kit = await startOperator({ registry, clock: "virtual", ...quiet });
    await kit.apply("v1/configmaps", { metadata: { name: "m" }, data: { mode: "on" } });
    await kit.until("v1/configmaps", "m", held);
    await kit.advance(31);
    expect(ticks).toBeGreaterThanOrEqual(3);
    await kit.apply("v1/configmaps", { metadata: { name: "m" }, data: { mode: "off" } });
    await kit.until("v1/configmaps", "m", (o) => !held(o));      // no handler matches: the finalizer goes
    const off = ticks;
    await kit.advance(60);
    expect(ticks).toBe(off);
    await kit.apply("v1/configmaps", { metadata: { name: "m" }, data: { mode: "on" } });
    await kit.until("v1/configmaps", "m", held);
    await kit.advance(21);
    expect(ticks).toBeGreaterThanOrEqual(off + 2);
  }, 30_000);

test("index filters (labels, field/value, when) over a resource no handler handles; size counts keys, values in "
  + "order, a key left empty disappears; a daemon waits on the index live", async () => {
  const [Things_, registry] = [Things(), new Registry()];
  const byTeam = { id: "byTeam", labels: { indexed: "yes" } };
  registry.on.index("v1/configmaps", ({ name, labels }) => ({ [labels.team ?? "none"]: name }), byTeam);
  registry.on.index("v1/configmaps", ({ name }) => ({ [name]: true }), { id: "kindA", field: "data.kind", value: "a" });
  registry.on.index("v1/configmaps", ({ name }) => ({ all: name }), { id: "notB", when: ({ name }) => name !== "b" });
  registry.on.timer(Things_, ({ indexes, patch }) => {
    const team = indexes.byTeam as Index<string, string>;
    patch.metadata.annotations = { seen: JSON.stringify({ size: team.size, entries: [...team].sort(),
      red: team.get("red"), blue: team.has("blue"), kindA: [...indexes.kindA!.keys()],
      notB: indexes.notB!.get("all").sort(), missing: team.get("nowhere") }) };
  }, { id: "reader", interval: 0.1 });
  registry.on.daemon(Things_, async ({ indexes, stopped }) => {
    while (!indexes.byTeam!.has("late") && await sleep(0.05, stopped)) { /* waits on the live index */ }
    return { late: indexes.byTeam!.get("late") };
  }, { id: "waiter" });
  await using kit = await startOperator({ registry, ...quiet });
  const cm = (name: string, labels: Record<string, string>, kind: string) =>
    kit.apply("v1/configmaps", { metadata: { name, labels }, data: { kind } });
  await cm("a", { indexed: "yes", team: "red" }, "a");
  await cm("b", { indexed: "yes", team: "red" }, "b");
  await cm("c", { team: "blue" }, "a");
  await kit.apply(Things_, { metadata: { name: "r" }, spec: {} });
  const seen = (want: unknown) => kit.until(Things_, "r", (o) => o.metadata.annotations?.seen === JSON.stringify(want));
  await seen({ size: 1, entries: [["red", ["a", "b"]]], red: ["a", "b"], blue: false, kindA: ["a", "c"],
    notB: ["a", "c"], missing: [] });
  await cm("a", { indexed: "yes", team: "green" }, "b");
  await cm("c", { indexed: "yes", team: "blue" }, "a");
  await seen({ size: 3, entries: [["blue", ["c"]], ["green", ["a"]], ["red", ["b"]]], red: ["b"], blue: true,
    kindA: ["c"], notB: ["a", "c"], missing: [] });
  await cm("a", { indexed: "no", team: "green" }, "b");
  await seen({ size: 2, entries: [["blue", ["c"]], ["red", ["b"]]], red: ["b"], blue: true, kindA: ["c"],
    notB: ["a", "c"], missing: [] });
  await cm("z", { indexed: "yes", team: "late" }, "x");
  const done = await kit.until(Things_, "r", (o) => o.status?.waiter);
  expect(done.status?.waiter).toEqual({ late: ["z"] });
}, 30_000);
