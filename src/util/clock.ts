// Handler time: the clock that schedules what an operator author asked for in time — timers'
// intervals and idle, daemons' initialDelay and sleeps, requeueAfter, reconcile backoff, handler
// retry delays and timeouts. By default it is the machine's (`realClock`); a test kit installs a
// `VirtualClock` for the operator it runs (`startOperator({ clock: "virtual" })`), and moves it
// with `advance`, so that an hour-long schedule is tested in milliseconds.
//
// Only handler time reads it. What keeps the operator alive and bounded stays on the machine's
// clock whatever is installed: request deadlines, watch timeouts, leases, batch windows, grace
// periods, and the kit's own waits (so a test with a stuck virtual clock still ends).
//
// The clock is process-wide, like the tracer (trace.ts): rooms read `clock()` at the moment they
// schedule, so no constructor carries it. One virtual clock at a time (useClock refuses a second).
//
// `working()` and `track()` are the narrow hook a virtual clock needs to know when the work a
// firing started is over: API requests and the queue's waiting items mark themselves while they
// last (`working`); the queue's runs and timers' calls run under `track`, which counts them except
// while they sleep on the clock (a handler awaiting `sleep(60)` waits for time: it is not busy).
// On the real clock both do nothing.

import { longTimeout, sleep } from "./abort.ts";

/** A timer of handler time: `cancel()` stops it (a no-op once fired). */
export type CancelTimer = () => void;

export interface Clock {
  /** Handler time, ms since the epoch. */
  now(): number;
  /** Resolves true after `ms` of handler time, or false as soon as `signal` aborts. Never rejects. */
  sleep(ms: number, signal?: AbortSignal): Promise<boolean>;
  /** Calls `fire` after `ms` of handler time. */
  timer(ms: number, fire: () => void): CancelTimer;
  /** Marks work in progress until the returned call (a virtual clock waits for it before the next firing). */
  working(): () => void;
  /** Runs `work` as work in progress until it settles, except while it sleeps on this clock. */
  track<T>(work: () => Promise<T>): Promise<T>;
  /** Whether it is a virtual clock (work is counted only then). */
  readonly virtual: boolean;
}

const noop = () => {};

export const realClock: Clock = {
  now: () => Date.now(),
  sleep,
  timer: longTimeout,
  working: () => noop,
  track: (work) => work(),
  virtual: false,
};

let installed: Clock = realClock;

/** The clock of handler time now installed. */
export function clock(): Clock {
  return installed;
}

/**
 * Installs `next` as the process's clock of handler time; the returned call puts the previous one
 * back. A virtual clock while another is installed is refused: two tests moving one time would
 * move each other's.
 */
export function useClock(next: Clock): () => void {
  if (next.virtual && installed.virtual && installed !== next) {
    throw new Error(
      "a virtual clock is already installed in this process (another startOperator({ clock: \"virtual\" }) " +
        "still running?): stop that operator first, tests sharing one time would move each other's",
    );
  }
  const previous = installed;
  installed = next;
  return () => {
    if (installed === next) installed = previous;
  };
}
