// The phases of daemons and timers (reconciling/background.ts) without a network, with a fake
// clock (`now` is a number here): initial delay, a timer's schedule (plain, sharp, idle), what a
// run's end leads to.

import { describe, expect, test } from "bun:test";
import { Registry } from "../../src/handling/registry.ts";
import type { BackgroundSpec } from "../../src/handling/registry.ts";
import { afterRun, dueAt, holdsDeletion, idleWait, nextTick, retryDelay, starting } from "../../src/reconciling/background.ts";

const T = 1_000_000;

function spec(kind: "daemon" | "timer", options: Record<string, unknown> = {}): BackgroundSpec {
  const registry = new Registry();
  if (kind === "daemon") registry.on.daemon("configmaps", () => {}, options);
  else registry.on.timer("configmaps", () => {}, { interval: 1, ...options });
  return registry.background[0]!;
}

describe("starting", () => {
  test("a daemon or timer starts at once, or after its initialDelay", () => {
    expect(starting(spec("daemon"), T)).toEqual({ kind: "starting", at: T });
    expect(starting(spec("timer", { initialDelay: 2.5 }), T)).toEqual({ kind: "starting", at: T + 2500 });
    expect(dueAt(starting(spec("daemon", { initialDelay: 1 }), T))).toBe(T + 1000);
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
    expect(() => registry.on.timer("configmaps", () => {}, {} as never)).toThrow("timer timer/configmaps#1: needs { interval } in seconds > 0");
    expect(() => registry.on.daemon("configmaps", () => {}, { cancellationTimeout: -1 })).toThrow("cancellationTimeout must be a number of seconds ≥ 0");
    registry.on.daemon("configmaps", function watch() {});
    expect(() => registry.on.daemon("configmaps", function watch() {})).toThrow('id "watch" is already registered');
    expect(registry.selectors()).toEqual(["configmaps"]);
  });
});
