// When a watcher tries again: the reconnect backoff, a delay a transition asked for, and the
// count of 410s in a row. Kept apart from the Watcher's I/O so its loop reads as steps only.

import { Backoff } from "../util/index.ts";

/** A watch that ended cleanly this soon without a single byte is a failure, not a timeout. */
const SHORT_WATCH_MS = 1000;

export class ReconnectPacing {
  /** A delay to wait before the next step, set by a transition that wants a pause. */
  private pending = 0;
  /** 410s in a row with no watch event (change or bookmark) between them. */
  private goneStreak = 0;

  constructor(private readonly backoff: Backoff) {}

  /** Pacing with the watcher's reconnect backoff (WatcherOptions.backoff), jittered by half. */
  static of(backoff: { initialMs: number; maxMs: number; resetAfterMs: number }): ReconnectPacing {
    return new ReconnectPacing(new Backoff({
      initial: backoff.initialMs, max: backoff.maxMs, resetAfter: backoff.resetAfterMs, jitter: 0.5,
    }));
  }

  /** A new events() call: 410s are counted afresh. */
  restart(): void {
    this.goneStreak = 0;
  }

  /** The pause asked for before the next step, once; 0 to go on at once. */
  takePending(): number {
    const delay = this.pending;
    this.pending = 0;
    return delay;
  }

  /** The watch delivered something (a change, a bookmark, or lived until the server ended it). */
  delivered(): void {
    this.goneStreak = 0;
  }

  /**
   * The first 410 relists at once (seed 002). Another 410 before the watch delivered anything
   * means the fresh LIST did not help (a lagging cache, an expiring continue token): relisting
   * at once again would LIST in a tight loop, so it waits for the reconnect backoff.
   */
  gone(): void {
    if (this.goneStreak++ > 0) this.pending = this.backoff.next();
  }

  /**
   * The server ended a watch. One that lived until then worked; one that ended at once with
   * nothing means something is wrong server-side: pause, do not spin. Returns the pause, or 0.
   */
  watchEnded(events: number, bytes: number, openedAt: number): number {
    if (events > 0 || bytes > 0 || Date.now() - openedAt >= SHORT_WATCH_MS) {
      this.delivered();
      return 0;
    }
    this.pending = this.backoff.next();
    return this.pending;
  }

  /** A failed request: how long to wait before the next one (at least what the server asked). */
  failed(retryAfterMs = 0): number {
    return Math.max(this.backoff.next(), retryAfterMs);
  }
}
