// Moving a virtual clock of handler time (util/virtual-clock.ts) while an operator runs on it:
// kit.advance(seconds) and simulate()'s settling share it. Timers fire one at a time, in order.
// After each firing it waits until the work that timer started is over — the operator quiet: no
// key of its queues busy or waiting, no timer's call running (a run asleep on the virtual clock
// waits for time: it is not busy), no API request in flight, nothing else the driver watches
// (`activity`: a simulation's writes and log lines), for QUIET_MS of real time so that the watch
// events of its own writes arrive and are handled too — before it fires the next. So a chain
// (requeueAfter 60 → a run → requeueAfter 60) inside the window all happens, in order.
// Every wait is bounded in real time: a stuck handler fails the test, it does not hang it.

import type { VirtualClock } from "../util/index.ts";

/** Real ms the operator must stay quiet after a firing: its writes' watch events arrive within it. */
export const QUIET_MS = 15;
/** Firings one advance may make; more is a loop (a requeueAfter of a millisecond in a window of hours). */
const MAX_FIRINGS = 10_000;

export interface AdvanceBounds {
  /** The bound of each wait for quiet, in real ms. */
  timeoutMs: number;
  /** Aborted when the operator ends by itself: the wait ends with its reason. */
  failed: AbortSignal;
  /** Work the clock does not see (writes, log lines): quiet only while its count stands still. */
  activity?: Activity;
  /** Firings allowed in one window (default 10 000). */
  maxFirings?: number;
  /**
   * Work in progress that stands still (nothing begun, no activity) for `ms` of real time waits for
   * something; `fire()` may then fire a timer it waits for (true if it did). Unset: it is waited out.
   */
  stall?: { ms: number; fire: () => boolean };
  /** Real ms of quiet asked (default QUIET_MS): less where what is on its way is known (`onTheWay`). */
  quietMs?: number;
  /** Whether something the clock cannot see is on its way to the operator (a watch line): not quiet while it is. */
  onTheWay?: () => boolean;
}

/** A count of what happens, and a promise of the next thing to. */
export interface Activity {
  count(): number;
  next(): Promise<void>;
}

const none: Activity = { count: () => 0, next: () => new Promise(() => {}) };

/** The operator never went quiet within the bound. */
export class StillBusy extends Error {
  constructor(message: string, readonly inProgress: number) {
    super(message);
    this.name = "StillBusy";
  }
}

/** More timers fired in one window than allowed: a loop in time. */
export class TimerStorm extends Error {
  constructor(message: string, readonly fired: number) {
    super(message);
    this.name = "TimerStorm";
  }
}

export async function advanceClock(time: VirtualClock, seconds: number, bounds: AdvanceBounds): Promise<void> {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) {
    throw new TypeError(`advance(seconds): seconds must be a finite number of 0 or more, got ${String(seconds)}`);
  }
  const target = time.now() + seconds * 1000;
  await quiet(time, bounds, "before advancing");
  await fireDue(time, target, bounds, `advance(${seconds})`);
  // a simulation's wait for a held watch line may have moved time past the target (simulate-settle.ts)
  if (time.now() < target) time.moveTo(target);
}

/**
 * Fires every timer due at or before `until`, one at a time, quiet after each (timers set by a
 * firing and due in the window fire too); the number fired. Past `maxFirings`, a TimerStorm.
 */
export async function fireDue(time: VirtualClock, until: number, bounds: AdvanceBounds, what: string): Promise<number> {
  const most = bounds.maxFirings ?? MAX_FIRINGS;
  let fired = 0;
  while (time.fireNext(until)) {
    if (++fired > most) {
      throw new TimerStorm(
        `${what}: more than ${most} timers fired in the window (the last at ` +
          `${new Date(time.now()).toISOString()}): a handler re-running itself without pause?`, fired,
      );
    }
    await quiet(time, bounds, `after the timer due at ${new Date(time.now()).toISOString()}`);
  }
  return fired;
}

/**
 * Resolves once no work is in progress and none began (nor any activity) for QUIET_MS; a StillBusy
 * past the bound. Work that stands still meanwhile may be unblocked by `stall` (its bound then restarts).
 */
export async function quiet(time: VirtualClock, bounds: AdvanceBounds, when: string): Promise<void> {
  let deadline = performance.now() + bounds.timeoutMs;
  const activity = bounds.activity ?? none;
  const mark = () => `${time.counts().begun} ${activity.count()}`;
  for (;;) {
    if (performance.now() > deadline) throw stillBusy(time, bounds, when);
    const before = mark();
    const wait = Math.min(deadline - performance.now(), bounds.stall?.ms ?? Infinity);
    if (await within(time.idle(), wait, bounds.failed)) {
      // a quiet period ends early when anything happens: waiting out the rest would only cost time
      await within(Promise.race([time.begins(), activity.next()]), bounds.quietMs ?? QUIET_MS, bounds.failed);
      if (bounds.failed.aborted) throw bounds.failed.reason;
      if (time.counts().inProgress === 0 && mark() === before && !bounds.onTheWay?.()) return;
    } else if (bounds.stall && mark() === before && bounds.stall.fire()) {
      deadline = performance.now() + bounds.timeoutMs;
    }
  }
}

function stillBusy(time: VirtualClock, bounds: AdvanceBounds, when: string): StillBusy {
  return new StillBusy(
    `advance: the operator was still busy ${when} after ${bounds.timeoutMs} ms of real time ` +
      `(${time.counts().inProgress} piece(s) of work in progress: ` +
      "a handler waiting for something that never comes, or a reconcile that asks again and again to run at once, " +
      "requeueAfter: 0?)", time.counts().inProgress,
  );
}

/** True once `promise` resolves, false after `ms` of real time; rejects with the reason when `failed` aborts. */
async function within(promise: Promise<void>, ms: number, failed: AbortSignal): Promise<boolean> {
  if (failed.aborted) throw failed.reason;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onFailed: (() => void) | undefined;
  try {
    return await Promise.race([
      promise.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, ms)))),
      new Promise<never>((_, reject) => {
        onFailed = () => reject(failed.reason);
        failed.addEventListener("abort", onFailed, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onFailed) failed.removeEventListener("abort", onFailed);
  }
}
