// Handler time for operator authors: `now()` and `sleep()` read the clock that schedules their
// timers and requeues (util/clock.ts), the machine's in production, the test kit's virtual one
// under `startOperator({ clock: "virtual" })`. A handler that computes a schedule from `now()`
// (instead of `new Date()`) is then moved by `kit.advance()` with everything else.

import { clock } from "../util/index.ts";

/** Handler time now: the machine's clock, or the test kit's virtual clock. */
export function now(): Date {
  return new Date(clock().now());
}

/**
 * Waits `seconds` of handler time (a daemon's pause between two rounds). Resolves true when the
 * time has passed, false as soon as `signal` aborts (pass the daemon's `ctx.signal`); never rejects.
 */
export function sleep(seconds: number, signal?: AbortSignal): Promise<boolean> {
  if (typeof seconds !== "number" || !(seconds >= 0) || !Number.isFinite(seconds)) {
    throw new TypeError(`sleep(seconds): seconds must be a finite number of 0 or more, got ${String(seconds)}`);
  }
  return clock().sleep(seconds * 1000, signal);
}
