// kit.advance(seconds): moves the virtual clock of handler time (util/virtual-clock.ts) forward,
// firing the timers due inside the window one at a time, in order. After each firing it waits
// until the work that timer started is over — the operator quiet: no key of its queues busy or
// waiting, no timer's call running (a run asleep on the virtual clock waits for time: it is not
// busy), no API request in flight, for QUIET_MS of real time so that the watch events of its own
// writes arrive and are handled too — before it fires the next. So a
// chain (requeueAfter 60 → a run → requeueAfter 60) inside the window all happens, in order.
// Every wait is bounded by the kit's timeout in real time: a stuck handler fails the test, it
// does not hang it.

import type { VirtualClock } from "../util/index.ts";

/** Real ms the operator must stay quiet after a firing: its writes' watch events arrive within it. */
const QUIET_MS = 15;
/** Firings one advance may make; more is a loop (a requeueAfter of a millisecond in a window of hours). */
const MAX_FIRINGS = 10_000;

export interface AdvanceBounds {
  /** The bound of each wait for quiet, in real ms. */
  timeoutMs: number;
  /** Aborted when the operator ends by itself: the wait ends with its reason. */
  failed: AbortSignal;
}

export async function advanceClock(time: VirtualClock, seconds: number, bounds: AdvanceBounds): Promise<void> {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) {
    throw new TypeError(`advance(seconds): seconds must be a finite number of 0 or more, got ${String(seconds)}`);
  }
  const target = time.now() + seconds * 1000;
  await quiet(time, bounds, "before advancing");
  let fired = 0;
  while (time.fireNext(target)) {
    if (++fired > MAX_FIRINGS) {
      throw new Error(
        `advance(${seconds}): more than ${MAX_FIRINGS} timers fired in the window (the last at ` +
          `${new Date(time.now()).toISOString()}): a handler re-running itself without pause?`,
      );
    }
    await quiet(time, bounds, `after the timer due at ${new Date(time.now()).toISOString()}`);
  }
  time.moveTo(target);
}

/** Resolves once no work is in progress and none began for QUIET_MS; throws past the bound. */
async function quiet(time: VirtualClock, bounds: AdvanceBounds, when: string): Promise<void> {
  const deadline = performance.now() + bounds.timeoutMs;
  for (;;) {
    const { begun } = time.counts();
    if (!(await within(time.idle(), deadline - performance.now(), bounds.failed))) {
      throw new Error(
        `advance: the operator was still busy ${when} after ${bounds.timeoutMs} ms of real time ` +
          `(${time.counts().inProgress} piece(s) of work in progress: ` +
          "a handler waiting for something that never comes?)",
      );
    }
    await within(new Promise(() => {}), QUIET_MS, bounds.failed);
    if (bounds.failed.aborted) throw bounds.failed.reason;
    const now = time.counts();
    if (now.inProgress === 0 && now.begun === begun) return;
  }
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
