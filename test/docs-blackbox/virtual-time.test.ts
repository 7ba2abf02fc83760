// Handler time (docs/testing.md "Virtual time") applied to what docs/daemons.md and docs/handlers.md
// promise in seconds: a timer with `idle` waits until the object has been unchanged that long, then
// ticks every `interval`; a handler's `timeout` counts from its first attempt and fails it for good.

import { expect, test } from "bun:test";
import { now, Registry, TemporaryError } from "kobun";
import { startOperator } from "kobun/testing";

test("timer { interval: 30, idle: 60 } and a handler { timeout: 25 } retried every 10 s, on the virtual clock", async () => {
  const registry = new Registry();
  let start = 0;
  const seconds = () => (now().getTime() - start) / 1000;
  const ticks: number[] = [];
  const attempts: number[] = [];
  registry.on.timer("v1/configmaps", () => { ticks.push(seconds()); }, { id: "tick", interval: 30, idle: 60 });
  registry.on.create("v1/secrets", () => {
    attempts.push(seconds());
    throw new TemporaryError("not yet", { delay: 10 });
  }, { id: "slow", timeout: 25 });
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent", timeout: 15_000 });
  start = kit.now().getTime();
  await kit.apply("v1/configmaps", { metadata: { name: "c" }, data: { a: "1" } });
  await kit.until("v1/configmaps", "c", (o) => o.metadata.finalizers?.length);   // the timer holds it
  await kit.advance(50);
  expect(ticks).toEqual([]);                           // not idle for 60 s yet
  await kit.advance(70);
  expect(ticks).toEqual([60, 90, 120]);
  await kit.apply("v1/secrets", { metadata: { name: "s" }, type: "Opaque" });
  await kit.logs.until("Handler 'slow' failed temporarily");
  await kit.advance(40);
  expect(attempts).toEqual([120, 130, 140]);          // the one due at 150 is past the 25 s: not called
  await kit.logs.until(/Handler 'slow' failed permanently: handler slow timed out after 25s/);
}, 30_000);

test("a timer's first call waits for an advance: within its spread (at most 1 s), then every interval", async () => {
  // docs/testing.md once listed a timer's first call among the timers of 0 s that fire without advancing.
  const registry = new Registry();
  let start = 0;
  const ticks: number[] = [];
  registry.on.timer("v1/configmaps", () => { ticks.push((now().getTime() - start) / 1000); }, { id: "tick", interval: 60 });
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent", timeout: 15_000 });
  start = kit.now().getTime();
  await kit.apply("v1/configmaps", { metadata: { name: "c" }, data: {} });
  await kit.until("v1/configmaps", "c", (o) => o.metadata.finalizers?.length);   // the timer holds it
  await kit.advance(0);
  expect(ticks).toEqual([]);
  await kit.advance(1);
  expect(ticks.length).toBe(1);
  expect(ticks[0]).toBeLessThan(1);
  await kit.advance(60);
  expect(ticks.length).toBe(2);
  expect(ticks[1]! - ticks[0]!).toBeCloseTo(60, 6);
}, 30_000);

// A Database test counted its requeues from a count taken while the echo of its Secret's creation still
// waited in the batch window: one run too many. advance(0) is the wait for quiet that the count needs.
test("advance(0) moves no time and waits for quiet: work still waiting (a wake in the batch window) has run", async () => {
  const registry = new Registry();
  const runs: number[] = [];
  registry.on.reconcile("v1/configmaps", () => { runs.push(now().getTime()); });
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent" });
  const start = kit.now().getTime();
  await kit.apply("v1/configmaps", { metadata: { name: "c" }, data: {} });
  await kit.advance(0);                                 // the event waited out the batch window (100 ms, real time)
  expect(runs).toEqual([start]);
  expect(kit.now().getTime()).toBe(start);
});
