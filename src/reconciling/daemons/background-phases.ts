// Daemons and timers: the second part of one object's life (life.ts's comment), one phase per
// daemon or timer, moved only by the pure transitions below (`now` passed in: no clock here).
// background.ts (the class Background) does the waiting and the calling.
//
//   phase          │ input                                   │ next phase
//   ───────────────┼─────────────────────────────────────────┼─────────────────────────────────────
//   (none)         │ object wanted (matches, not deleting,   │ starting(now + initialDelay
//                  │   not frozen)                           │   [+ a timer's spread, below])
//   starting(at)   │ due, timer with `idle` not yet idle     │ starting(changedAt + idle)
//   starting(at)   │ due, idle-only timer called since the   │ starting(now + idle)
//                  │   object's last change                  │
//   starting(at)   │ due                                     │ running
//   running        │ daemon returned                         │ finished (never restarted)
//   running        │ daemon threw (PermanentError)           │ finished
//   running        │ daemon threw                            │ backing-off(now + backoff)
//   running        │ timer call done, or failed for good     │ starting(next tick)
//   running        │ timer call to retry                     │ backing-off(now + its delay)
//   backing-off(t) │ due                                     │ running
//   any            │ stop (deleted, unmatched, freeze, exit) │ stopping → (none) once ended or abandoned
//
// While any is not (none) or finished, a deletion waits: the delete handlers run only after
// every daemon and timer of the object has stopped (so a timer call is never beside them).

import type { BackgroundSpec } from "../../declaring/index.ts";

export type BackgroundPhase =
  | { kind: "starting"; at: number }
  | { kind: "running"; since: number }
  | { kind: "backing-off"; until: number }
  | { kind: "stopping"; since: number }
  | { kind: "finished" };

/** How a run ended, as the transitions take it (delays in ms). */
export type RunEnd =
  | { kind: "returned" } // a daemon returned, a timer call succeeded (or failed for good)
  | { kind: "retry"; delayMs: number } // a daemon threw, a timer call asked to be retried
  | { kind: "permanent" } // a daemon threw PermanentError
  | { kind: "aborted" };

/** A daemon's or timer's `backoff` option when not given (docs/daemons.md); handling.backoff is not theirs. */
export const DEFAULT_BACKOFF_S = 60;
/** The widest spread of timers' first calls (seconds): a long-interval timer still starts soon. */
const MAX_SPREAD_S = 1;

/**
 * The first phase of a daemon or timer for an object that is wanted now. A timer's first call
 * comes after its initialDelay plus a spread over its interval (at most 1 s), the same for the
 * same object and timer: 1,000 objects listed at once would otherwise wake their timers in
 * the same millisecond, every interval, and stall the event loop for all of them.
 */
export function starting(spec: BackgroundSpec, now: number, uid = ""): BackgroundPhase {
  const at = now + (spec.options.initialDelay ?? 0) * 1000;
  return { kind: "starting", at: spec.kind === "timer" ? at + spreadOf(spec, uid) : at };
}

/** Where in [0, min(interval, 1 s)) this object's timer starts, in ms: by a hash of its uid and the timer's id. */
export function spreadOf(spec: BackgroundSpec, uid: string): number {
  const widthMs = Math.min(spec.options.interval ?? 1, MAX_SPREAD_S) * 1000;
  // FNV-1a (32-bit) over the UTF-16 code units: stable, cheap and well spread for uids.
  let hash = 0x811c9dc5;
  const key = `${uid}/${spec.id}`;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return Math.floor(((hash >>> 0) / 2 ** 32) * widthMs);
}

/** When a due `starting` phase may run: now (0), or the ms to wait until the object is idle long enough. */
export function idleWait(spec: BackgroundSpec, changedAt: number, now: number): number {
  const idle = spec.kind === "timer" ? spec.options.idle : undefined;
  if (!idle) return 0;
  return Math.max(0, changedAt + idle * 1000 - now);
}

/**
 * Whether a due call of an idle-only timer (no `interval`) must wait for a change: it was called since
 * the object last changed. It then looks again `idle` later (Kopf polls so too); a change meanwhile
 * is left alone `idle` long by idleWait before the call.
 */
export function awaitsChange(spec: BackgroundSpec, changedAt: number, lastCall: number | undefined): boolean {
  const idleOnly = spec.kind === "timer" && spec.options.interval === undefined;
  return idleOnly && lastCall !== undefined && changedAt <= lastCall;
}

/** Where a run that began at `began` leads. */
export function afterRun(spec: BackgroundSpec, end: RunEnd, began: number, now: number): BackgroundPhase {
  if (end.kind === "aborted") return { kind: "stopping", since: now };
  if (spec.kind === "daemon") {
    if (end.kind === "retry") return { kind: "backing-off", until: now + end.delayMs };
    return { kind: "finished" };
  }
  if (end.kind === "retry") return { kind: "backing-off", until: now + end.delayMs };
  return { kind: "starting", at: nextTick(spec, began, now) };
}

/**
 * A timer's next call: `interval` after this one ended, or with `sharp` on the fixed schedule
 * began + k·interval (a call that overran skips the ticks it covered, never runs twice at once).
 */
export function nextTick(spec: BackgroundSpec, began: number, now: number): number {
  const { interval: every = spec.options.idle } = spec.options; // an idle-only timer looks again `idle` later
  const interval = (every ?? 1) * 1000;
  if (!spec.options.sharp) return now + interval;
  const k = Math.max(1, Math.ceil((now - began) / interval));
  const at = began + k * interval;
  return at > now ? at : at + interval;
}

/** A daemon's restart delay after a throw: the error's own delay (TemporaryError), else `backoff`. */
export function retryDelay(spec: BackgroundSpec, errorDelayS: number | undefined): number {
  return (errorDelayS ?? spec.options.backoff ?? DEFAULT_BACKOFF_S) * 1000;
}

/** When a waiting phase is due (ms epoch), or undefined when it does not wait. */
export function dueAt(phase: BackgroundPhase): number | undefined {
  return phase.kind === "starting" ? phase.at : phase.kind === "backing-off" ? phase.until : undefined;
}

/** Whether a phase keeps the object's deletion waiting (anything but finished). */
export function holdsDeletion(phase: BackgroundPhase): boolean {
  return phase.kind !== "finished";
}
