// The kit's virtual clock (issue 35): under startOperator({ clock: "virtual" }) handler time —
// requeueAfter, timers' intervals, daemons' sleeps, handler retry delays, `now()` — stands still
// until kit.advance(seconds) moves it, and an advance fires what falls due in its window, in order,
// each once the work of the one before is over. Hours of schedule run in milliseconds.

import { expect, test } from "bun:test";
import Type from "typebox";
import { defineResource, now, Registry, sleep, TemporaryError } from "kobun";
import { startOperator } from "kobun/testing";

const HOUR = 3600;

function schedules() {
  return defineResource({
    group: "clock.kobun.dev", kind: "Schedule", plural: "schedules",
    schema: { spec: Type.Object({ note: Type.String() }), status: Type.Object({}, { additionalProperties: true }) },
  });
}

test("requeueAfter 3600: a reconcile runs again every virtual hour, none before, a chain inside one advance", async () => {
  const registry = new Registry();
  const Schedules = schedules();
  const runs: number[] = [];
  const firstRun = Promise.withResolvers<void>();
  registry.on.reconcile(Schedules, () => {
    runs.push(now().getTime());
    firstRun.resolve();
    return { requeueAfter: HOUR };
  });
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent" });
  const started = kit.now().getTime();
  await kit.apply(Schedules, { metadata: { name: "hourly" }, spec: { note: "x" } });
  await firstRun.promise;
  expect(runs).toEqual([started]); // the first run, at the time the kit started: nothing moved it
  const wall = performance.now();
  await kit.advance(HOUR - 1);
  expect(runs.map((at) => at - started)).toEqual([0]);
  await kit.advance(1);
  expect(runs).toEqual([started, started + HOUR * 1000]);
  await kit.advance(3 * HOUR); // a chain: each run asks for the next, inside one window
  const elapsed = performance.now() - wall;
  expect(runs.map((at) => (at - started) / (HOUR * 1000))).toEqual([0, 1, 2, 3, 4]);
  expect(kit.now().getTime()).toBe(started + 4 * HOUR * 1000);
  expect(elapsed).toBeLessThan(2_000); // four virtual hours (measured: tens of ms)
}, 30_000); // a start-up and several advances: bounded for a loaded 2-core machine

test("an on.timer with interval 3600 runs 3 times in advance(3 * 3600), its status written each time", async () => {
  const registry = new Registry();
  const Schedules = schedules();
  let calls = 0;
  registry.on.timer(Schedules, () => ({ calls: ++calls, at: now().toISOString() }), { id: "tick", interval: HOUR });
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent" });
  await kit.apply(Schedules, { metadata: { name: "ticking" }, spec: { note: "x" } });
  await kit.until(Schedules, "ticking", (o) => o.metadata.finalizers?.length);
  expect(calls).toBe(0); // a timer's first call is due within its spread (under a second): not yet advanced to
  await kit.advance(3 * HOUR);
  expect(calls).toBe(3);
  const ticked = await kit.until(Schedules, "ticking", (o) => (o.status as any)?.tick?.calls === 3);
  expect(Date.parse((ticked.status as any).tick.at)).toBeGreaterThan(kit.now().getTime() - HOUR * 1000);
}, 30_000); // a start-up and several advances: bounded for a loaded 2-core machine

test("a handler's retry delay of 60 s passes only when advanced: not at 59, at 60", async () => {
  const registry = new Registry();
  const Schedules = schedules();
  let attempts = 0;
  registry.on.create(Schedules, () => {
    if (++attempts === 1) throw new TemporaryError("not yet", { delay: 60 });
    return { attempts };
  }, { id: "create_fn" });
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent" });
  await kit.apply(Schedules, { metadata: { name: "retried" }, spec: { note: "x" } });
  await kit.logs.until(/not yet/);
  await kit.advance(59);
  expect(attempts).toBe(1);
  await kit.advance(1);
  const done = await kit.until(Schedules, "retried", (o) => (o.status as any)?.create_fn);
  expect((done.status as any).create_fn).toEqual({ attempts: 2 });
}, 30_000); // a start-up and several advances: bounded for a loaded 2-core machine

test("a failing reconcile's backoff runs on the virtual clock: 5, 10, 20 ms, none before it is advanced", async () => {
  const registry = new Registry();
  const Schedules = schedules();
  const runs: number[] = [];
  registry.on.reconcile(Schedules, () => {
    runs.push(now().getTime());
    if (runs.length < 4) throw new Error(`attempt ${runs.length} fails`);
  });
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent" });
  const started = kit.now().getTime();
  await kit.apply(Schedules, { metadata: { name: "failing" }, spec: { note: "x" } });
  await kit.logs.until(/attempt 1 fails/);
  await kit.advance(0); // what was due now ran; the retry waits for its 5 ms
  expect(runs.length).toBe(1);
  await kit.advance(1);
  expect(runs.map((at) => at - started)).toEqual([0, 5, 15, 35]); // controller-runtime's backoff, doubling
}, 30_000); // a start-up and several advances: bounded for a loaded 2-core machine

test("a daemon starts after its initialDelay, its sleep(600, signal) wakes once per 600 s, it ends when the object goes", async () => {
  const registry = new Registry();
  const Schedules = schedules();
  const beats: number[] = [];
  let ended = false;
  registry.on.daemon(Schedules, async ({ signal }) => {
    while (await sleep(600, signal)) beats.push(now().getTime());
    ended = true;
  }, { initialDelay: 60 });
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent" });
  const started = kit.now().getTime();
  await kit.apply(Schedules, { metadata: { name: "beating" }, spec: { note: "x" } });
  await kit.until(Schedules, "beating", (o) => o.metadata.finalizers?.length);
  await kit.advance(60 + 1800);
  expect(beats.map((at) => Math.round((at - started) / 1000))).toEqual([660, 1260, 1860]);
  await kit.client.delete(await kit.client.resolve("schedules.clock.kobun.dev"), "default", "beating");
  await kit.gone(Schedules, "beating");
  expect(ended).toBe(true);
}, 30_000); // a start-up and several advances: bounded for a loaded 2-core machine

test("a handler's timeout is handler time: a 30 s timeout ends a 60 s sleep at 30 s of the advance", async () => {
  const registry = new Registry();
  const Schedules = schedules();
  let woke: boolean | undefined;
  const called = Promise.withResolvers<void>();
  registry.on.create(Schedules, async ({ signal }) => {
    called.resolve();
    woke = await sleep(60, signal);
  }, { id: "create_fn", timeout: 30 });
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent" });
  await kit.apply(Schedules, { metadata: { name: "slow" }, spec: { note: "x" } });
  await called.promise;
  await kit.advance(29);
  expect(woke).toBeUndefined();
  await kit.advance(31);
  expect(woke).toBe(false); // aborted by the timeout, not woken by its own 60 s
  await kit.logs.until(/timed out after 30s/);
}, 30_000); // a start-up and several advances: bounded for a loaded 2-core machine

test("advance fails, bounded by the kit's timeout, while a handler never ends, saying so", async () => {
  const registry = new Registry();
  const Schedules = schedules();
  let called!: () => void;
  const handling = new Promise<void>((resolve) => (called = resolve));
  registry.on.create(Schedules, ({ signal }) => new Promise((resolve) => {
    called();
    signal.addEventListener("abort", resolve); // it ends only when the operator stops
  }), { id: "create_fn" });
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent", timeout: 300 });
  await kit.apply(Schedules, { metadata: { name: "stuck" }, spec: { note: "x" } });
  await handling;
  await expect(kit.advance(60)).rejects.toThrow(
    "advance: the operator was still busy before advancing after 300 ms of real time (1 piece(s) of work in progress",
  );
}, 30_000); // a start-up and several advances: bounded for a loaded 2-core machine

test("advance refuses the machine's clock and a bad number, with the fix in the message", async () => {
  await using kit = await startOperator({ registry: new Registry(), logLevel: "silent" });
  await expect(kit.advance(1)).rejects.toThrow("start it with startOperator({ clock: \"virtual\" })");
  await expect(startOperator({ registry: new Registry(), clock: "fake" as "virtual" }))
    .rejects.toThrow('startOperator({ clock }): "real" or "virtual", got "fake"');
  await using virtual = await startOperator({ registry: new Registry(), clock: "virtual", logLevel: "silent" });
  await expect(virtual.advance(-1)).rejects.toThrow("advance(seconds): seconds must be a finite number of 0 or more, got -1");
  await expect(startOperator({ registry: new Registry(), clock: "virtual" }))
    .rejects.toThrow("a virtual clock is already installed in this process");
}, 30_000); // a start-up and several advances: bounded for a loaded 2-core machine

test("on a virtual clock, a start-up that waits (a sleep, a retry after a TemporaryError) fires those waits and starts", async () => {
  const registry = new Registry();
  let tries = 0;
  registry.on.startup(async ({ signal }) => {
    await sleep(20, signal);
    if (++tries < 2) throw new TemporaryError("not yet", { delay: 30 });
  });
  const before = Date.now();
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent" });
  expect(tries).toBe(2);
  // 20 s, the retry's 30 s, 20 s again: moved on by exactly what start-up waited, no more
  expect(kit.now().getTime() - before).toBeGreaterThanOrEqual(70_000);
  expect(kit.now().getTime() - before).toBeLessThan(75_000);
}, 20_000);
