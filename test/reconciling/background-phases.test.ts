// The phases of daemons and timers (reconciling/daemons/background-phases.ts) without a network, with a fake
// clock (`now` is a number here): initial delay, a timer's schedule (plain, sharp, idle), what a
// run's end leads to.

import { describe, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/registry.ts";
import type { BackgroundSpec } from "../../src/declaring/registry.ts";
import { afterRun, dueAt, holdsDeletion, idleWait, nextTick, retryDelay, spreadOf, starting } from "../../src/reconciling/daemons/background-phases.ts";

const T = 1_000_000;

function spec(kind: "daemon" | "timer", options: Record<string, unknown> = {}): BackgroundSpec {
  const registry = new Registry();
  if (kind === "daemon") registry.on.daemon("configmaps", () => {}, options);
  else registry.on.timer("configmaps", () => {}, { interval: 1, ...options });
  return registry.background[0]!;
}

describe("starting", () => {
  test("a daemon starts at once, or after its initialDelay; a timer after its initialDelay plus its object's spread", () => {
    expect(starting(spec("daemon"), T, "uid-1")).toEqual({ kind: "starting", at: T });
    expect(dueAt(starting(spec("daemon", { initialDelay: 1 }), T, "uid-1"))).toBe(T + 1000);
    const timer = spec("timer", { initialDelay: 2.5 });
    expect(starting(timer, T, "uid-1")).toEqual({ kind: "starting", at: T + 2500 + spreadOf(timer, "uid-1") });
  });

  test("timers' first calls are spread over their interval (at most 1 s), the same for the same object: 1,000 do not wake in one millisecond", () => {
    const timer = spec("timer", { interval: 1 });
    const uids = Array.from({ length: 1000 }, (_, i) => `7f3c2a1e-${String(i).padStart(4, "0")}-4b1d-9e2f-a0c1d2e3f4a5`);
    const offsets = uids.map((uid) => spreadOf(timer, uid));
    expect(offsets.every((ms) => Number.isInteger(ms) && ms >= 0 && ms < 1000)).toBe(true);
    expect(uids.map((uid) => spreadOf(timer, uid))).toEqual(offsets); // deterministic per uid
    // Roughly one per millisecond: no millisecond holds more than a handful of first calls.
    const perMs = new Map<number, number>();
    for (const ms of offsets) perMs.set(ms, (perMs.get(ms) ?? 0) + 1);
    expect(perMs.size).toBeGreaterThan(550);
    expect(Math.max(...perMs.values())).toBeLessThanOrEqual(8);
    // A short interval spreads over itself; a long one over 1 s only (its first call stays prompt).
    expect(uids.every((uid) => spreadOf(spec("timer", { interval: 0.2 }), uid) < 200)).toBe(true);
    expect(Math.max(...uids.map((uid) => spreadOf(spec("timer", { interval: 3600 }), uid)))).toBeLessThan(1000);
  });
});

describe("a timer's schedule", () => {
  test("plain: `interval` after the call ended, however long it ran", () => {
    expect(nextTick(spec("timer", { interval: 1 }), T, T + 300)).toBe(T + 1300);
  });

  test("sharp: the fixed schedule from the call's start; a call that overran skips the ticks it covered", () => {
    const sharp = spec("timer", { interval: 1, sharp: true });
    expect(nextTick(sharp, T, T + 300)).toBe(T + 1000);
    expect(nextTick(sharp, T, T + 2500)).toBe(T + 3000);
    expect(nextTick(sharp, T, T + 1000)).toBe(T + 2000);
  });

  test("idle: a due call waits until the object has been unchanged `idle` seconds", () => {
    const idle = spec("timer", { idle: 5 });
    expect(idleWait(idle, T, T + 2000)).toBe(3000);
    expect(idleWait(idle, T, T + 6000)).toBe(0);
    expect(idleWait(spec("timer"), T, T)).toBe(0);
    expect(idleWait(spec("daemon"), T, T)).toBe(0);
  });
});

describe("what a run's end leads to", () => {
  test("a daemon that returns is finished (never restarted); one that threw backs off; PermanentError finishes it", () => {
    const d = spec("daemon", { backoff: 2 });
    expect(afterRun(d, { kind: "returned" }, T, T + 10)).toEqual({ kind: "finished" });
    expect(afterRun(d, { kind: "permanent" }, T, T + 10)).toEqual({ kind: "finished" });
    expect(afterRun(d, { kind: "retry", delayMs: retryDelay(d, undefined) }, T, T + 10)).toEqual({ kind: "backing-off", until: T + 2010 });
    expect(retryDelay(d, 0.5)).toBe(500);
    expect(retryDelay(spec("daemon"), undefined)).toBe(60_000);
  });

  test("a timer call that ended (well or for good) waits for its next tick; one to retry backs off", () => {
    const t = spec("timer", { interval: 1 });
    expect(afterRun(t, { kind: "returned" }, T, T + 10)).toEqual({ kind: "starting", at: T + 1010 });
    expect(afterRun(t, { kind: "retry", delayMs: 500 }, T, T + 10)).toEqual({ kind: "backing-off", until: T + 510 });
  });

  test("an aborted run is stopping; only a finished one lets a deletion go without waiting", () => {
    const t = spec("timer");
    expect(afterRun(t, { kind: "aborted" }, T, T + 1)).toEqual({ kind: "stopping", since: T + 1 });
    expect(holdsDeletion({ kind: "stopping", since: T })).toBe(true);
    expect(holdsDeletion({ kind: "running", since: T })).toBe(true);
    expect(holdsDeletion({ kind: "finished" })).toBe(false);
    expect(dueAt({ kind: "running", since: T })).toBeUndefined();
  });
});

describe("registration", () => {
  test("bad options get a clear error", () => {
    const registry = new Registry();
    expect(() => registry.on.timer("configmaps", () => {}, {} as never)).toThrow("timer timer/configmaps#1: needs { interval } or { idle } in seconds > 0");
    expect(() => registry.on.daemon("configmaps", () => {}, { cancellationTimeout: -1 })).toThrow("cancellationTimeout must be a number of seconds ≥ 0");
    registry.on.daemon("configmaps", function watch() {});
    expect(() => registry.on.daemon("configmaps", function watch() {})).toThrow('id "watch" is already registered');
    expect(registry.selectors()).toEqual(["configmaps"]);
  });
});
