// VirtualClock: handler time that moves only when told. Timers wait in order of when they are
// due (then of when they were set); `fireNext(limit)` moves time to the earliest due at or before
// `limit` and fires that one alone, so a driver (the test kit's `advance`, later the simulation of
// issue 34) decides what runs between two firings: let the work a firing started finish
// (`idle()`), inject a fault, fire the next. A timer of 0 ms (or less) is due now: it fires on the
// next turn of the event loop without being advanced to, as on the real clock, and counts as work
// until it has. Work run under `track` is counted while it runs and not while it sleeps on this
// clock: an AsyncLocalStorage carries the run into its awaits, so a sleep knows whose it is.

import { AsyncLocalStorage } from "node:async_hooks";
import type { CancelTimer, Clock } from "./clock.ts";

/** One tracked run: it counts as work while it has not ended and sleeps in none of its awaits. */
interface Run {
  sleeping: number;
  ended: boolean;
}

interface Pending {
  at: number;
  order: number;
  fire: () => void;
}

export class VirtualClock implements Clock {
  readonly virtual = true;
  private current: number;
  private order = 0;
  /** Sorted by `at`, then `order`: the first is the next due. */
  private readonly pending: Pending[] = [];
  private busy = 0;
  private begun = 0;
  private idleWaiters: (() => void)[] = [];
  private beginWaiters: (() => void)[] = [];
  private readonly runs = new AsyncLocalStorage<Run>();

  /** `start`: ms since the epoch (default the machine's now, so that the server's timestamps are near). */
  constructor(start: number = Date.now()) {
    if (!Number.isFinite(start)) throw new Error(`VirtualClock: the start must be a finite time in ms, got ${start}`);
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  timer(ms: number, fire: () => void): CancelTimer {
    if (!(ms > 0)) return this.dueNow(fire);
    const entry: Pending = { at: this.current + ms, order: this.order++, fire };
    let i = this.pending.length;
    while (i > 0 && this.pending[i - 1]!.at > entry.at) i--;
    this.pending.splice(i, 0, entry);
    return () => {
      const at = this.pending.indexOf(entry);
      if (at >= 0) this.pending.splice(at, 1);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    const run = this.runs.getStore();
    if (run && run.sleeping++ === 0 && !run.ended) this.release();
    return new Promise<boolean>((resolve) => {
      // Busy again from the moment it wakes, before its awaiter goes on.
      const wake = (slept: boolean) => {
        if (run && --run.sleeping === 0 && !run.ended) this.begin();
        resolve(slept);
      };
      const onAbort = () => {
        cancel();
        wake(false);
      };
      const cancel = this.timer(ms, () => {
        signal?.removeEventListener("abort", onAbort);
        wake(true);
      });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  working(): () => void {
    this.begin();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.release();
    };
  }

  track<T>(work: () => Promise<T>): Promise<T> {
    const run: Run = { sleeping: 0, ended: false };
    this.begin();
    return this.runs.run(run, work).finally(() => {
      run.ended = true;
      if (run.sleeping === 0) this.release();
    });
  }

  private begin(): void {
    this.busy++;
    this.begun++;
    if (this.beginWaiters.length > 0) for (const wake of this.beginWaiters.splice(0)) wake();
  }

  private release(): void {
    if (--this.busy === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /**
   * Work marked in progress now, how many pieces have begun so far (a driver compares two readings
   * to see whether any began between), and the timers waiting to be advanced to.
   */
  counts(): { inProgress: number; begun: number; waiting: number } {
    return { inProgress: this.busy, begun: this.begun, waiting: this.pending.length };
  }

  /** When the earliest timer is due (ms since the epoch), if any. */
  nextDue(): number | undefined {
    return this.pending[0]?.at;
  }

  /** Moves time to the earliest timer due at or before `limit` and fires it alone; false if none is. */
  fireNext(limit: number = Infinity): boolean {
    const first = this.pending[0];
    if (!first || first.at > limit) return false;
    this.pending.shift();
    this.current = Math.max(this.current, first.at);
    first.fire();
    return true;
  }

  /** Moves time forward to `at` without firing: refused past a timer due before it (fire those first). */
  moveTo(at: number): void {
    if (!Number.isFinite(at) || at < this.current) {
      throw new Error(`VirtualClock: time moves forward only (now ${this.current}, asked ${at})`);
    }
    const due = this.nextDue();
    if (due !== undefined && due < at) {
      throw new Error(`VirtualClock: a timer is due at ${due}, before ${at}: fire it first (fireNext)`);
    }
    this.current = at;
  }

  /** Resolves when the next piece of work begins (a driver waiting out a quiet period stops waiting then). */
  begins(): Promise<void> {
    return new Promise((resolve) => this.beginWaiters.push(resolve));
  }

  /** Resolves once no work is marked in progress (at once if none is). */
  idle(): Promise<void> {
    if (this.busy === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private dueNow(fire: () => void): CancelTimer {
    const done = this.working();
    const timer = setTimeout(() => {
      fire();
      done();
    }, 0);
    return () => {
      clearTimeout(timer);
      done();
    };
  }
}
