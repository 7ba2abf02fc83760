// VirtualClock: handler time that moves only when told. Timers wait in order of when they are
// due (then of when they were set); `fireNext(limit)` moves time to the earliest due at or before
// `limit` and fires that one alone, so a driver (the test kit's `advance`, later the simulation of
// issue 34) decides what runs between two firings: let the work a firing started finish
// (`idle()`), inject a fault, fire the next. A timer of 0 ms (or less) is due now: it fires on the
// next turn of the event loop without being advanced to, as on the real clock, and counts as work
// until it has.

import type { CancelTimer, Clock } from "./clock.ts";

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
    return new Promise((resolve) => {
      const onAbort = () => {
        cancel();
        resolve(false);
      };
      const cancel = this.timer(ms, () => {
        signal?.removeEventListener("abort", onAbort);
        resolve(true);
      });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  working(): () => void {
    this.busy++;
    this.begun++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.busy === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    };
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
