// queueing/'s runner: one worker per key (an object's uid), so that the events of one object
// are processed strictly one at a time while many objects proceed concurrently, at most
// `limit` at once (util/semaphore.ts). When a key runs is the scheduler's (schedule.ts).
//
// What it does:
// - `push(key, item)` keeps only the newest pending item per key ("latest wins"); a burst that
//   arrives while the key is busy or inside the batch window collapses into one item.
// - the batch window (default 100 ms, 0 allowed) is a leading-edge throttle: the first item of a
//   quiet key runs at once (after one turn of the event loop, so that events delivered together
//   merge), and then a key runs at most once per window, with the newest item. A create is
//   handled in about a millisecond, and a burst of changes still costs one run per window.
//   With a window of 0 no timer is created at all on the hot path.
// - a worker limit bounds how many keys are *processing* at once (a counting semaphore);
//   keys that only wait (for an item, a retry timer, their window) hold no slot.
// - `process()` may ask to run again after a delay (`again`, ms) with the same or a fresher item:
//   the timer lives in the worker and is cancelled by a new push or by close().
// - an optional `skip(key, item)` drops an item that waited for its busy key but is already known
//   to be useless (a stale echo): no run, no batch-window timer.
// - idle workers exit after `idleMs` (one shared reaper interval, not a timer per worker).
// - `close(graceMs)` aborts the workers' signal through a TaskScope and waits for them.
//
// What it must never do: run two items of one key concurrently, drop the newest item of a key,
// import anything but util/, or know what a Kubernetes object is.

import { TaskScope, type TaskReport } from "../util/scope.ts";
import { silentLogger, type Logger } from "../util/log.ts";
import { Semaphore } from "../util/semaphore.ts";
import type { QueueFigures, QueueObserver } from "./observer.ts";
import { newSlot, Schedule, type Slot } from "./schedule.ts";

export interface Outcome<T> {
  /** Run `process()` again for this key after this many ms, unless a newer item comes first. */
  again?: number;
  /** The item to use for that re-run (e.g. the object as the server returned it after a patch). */
  item?: T;
}

export interface WorkersOptions<T> {
  process(key: string, item: T, signal: AbortSignal): Promise<Outcome<T> | void>;
  /**
   * Optional: whether an item that waited while its key was processing is already known to
   * be useless now (e.g. a stale echo of the key's own last write). Such an item is dropped
   * before the batch window instead of being processed.
   */
  skip?(key: string, item: T): boolean;
  /** Batch window in ms: a key runs at most once per window (the first item of a quiet key at once). Default 100. */
  window?: number;
  /** How many keys may be processing at the same time. Default 100. */
  limit?: number;
  /** How long a worker with nothing to do stays alive, in ms. Default 10 000. */
  idleMs?: number;
  /** Parent signal: aborting it is like `close(0)`. */
  signal?: AbortSignal;
  logger?: Logger;
  name?: string;
  /** Hears of adds, waits, work and re-runs (the workqueue_* metrics); none by default. */
  observer?: QueueObserver;
}

export class Workers<T> {
  private readonly slots = new Map<string, Slot<T>>();
  private readonly scope: TaskScope;
  private readonly window: number;
  private readonly logger: Logger;
  /** Bounds how many keys are processing at once. */
  private readonly permits: Semaphore;
  private readonly schedule: Schedule<T>;
  private readonly settleWaiters: (() => void)[] = [];
  private readonly observer: QueueObserver | undefined;

  constructor(private readonly options: WorkersOptions<T>) {
    this.observer = options.observer;
    this.observer?.watch?.(() => this.figures());
    this.window = options.window ?? 100;
    this.permits = new Semaphore(Math.max(1, options.limit ?? 100));
    this.schedule = new Schedule<T>(options.idleMs ?? 10_000);
    this.logger = options.logger ?? silentLogger;
    this.scope = new TaskScope(options.name ?? "workers", options.signal, (name, error) =>
      this.logger.error("worker failed", { task: name, error }),
    );
    this.scope.signal.addEventListener("abort", () => this.wakeAll(), { once: true });
  }

  /** Number of live workers (busy, waiting or idle). */
  get size(): number {
    return this.slots.size;
  }

  /** Highest number of keys processing at once (for tests and metrics). */
  get peak(): number {
    return this.permits.peak;
  }

  get signal(): AbortSignal {
    return this.scope.signal;
  }

  /**
   * Queues `item` for `key`, replacing any item of that key not yet taken by its worker.
   * `immediate`: skip the batch window (e.g. objects from a LIST are already the latest state).
   */
  push(key: string, item: T, immediate = false): void {
    if (this.scope.isClosed) return;
    let slot = this.slots.get(key);
    if (slot) {
      if (!slot.queued) this.queued(slot);
      slot.pending = item;
      slot.hasPending = true;
      slot.immediate = immediate;
      const wake = slot.wake;
      if (wake) {
        slot.wake = undefined;
        wake();
      }
      return;
    }
    slot = newSlot(item, immediate);
    this.observer?.added();
    this.slots.set(key, slot);
    void this.scope.spawn(key, (signal) => this.run(key, slot, signal));
  }

  /**
   * Resolves once no key is processing or has an item waiting (delayed re-runs do not count).
   * For tests and orderly drains; it does not stop new items from coming.
   */
  settled(): Promise<void> {
    if (this.isSettled()) return Promise.resolve();
    return new Promise((resolve) => this.settleWaiters.push(resolve));
  }

  private isSettled(): boolean {
    for (const slot of this.slots.values()) if (slot.busy || slot.hasPending) return false;
    return true;
  }

  private checkSettled(): void {
    // A processing key holds a slot: while any does, nothing is settled (and no O(keys) scan
    // runs on every completion).
    if (this.settleWaiters.length && this.permits.inUse === 0 && this.isSettled()) for (const resolve of this.settleWaiters.splice(0)) resolve();
  }

  /** Forgets a key's pending item and retry timer (e.g. the object is gone); a running item finishes. */
  forget(key: string): void {
    const slot = this.slots.get(key);
    if (!slot) return;
    if (slot.hasPending) slot.queued = false;
    slot.pending = undefined;
    slot.hasPending = false;
    slot.againAt = undefined;
    slot.wake?.();
  }

  /** Aborts every worker's signal and waits up to `graceMs` for them to finish. */
  async close(graceMs: number): Promise<TaskReport> {
    return this.scope.close(graceMs); // aborting the scope's signal calls wakeAll()
  }

  private async run(key: string, slot: Slot<T>, signal: AbortSignal): Promise<void> {
    try {
      while (!signal.aborted) {
        if (!slot.hasPending) {
          const fired = await this.schedule.wait(slot);
          if (signal.aborted) return;
          if (!slot.hasPending) {
            if (fired === "again" && slot.current !== undefined) {
              this.queued(slot);
              slot.pending = slot.current;
              slot.hasPending = true;
            } else if (fired === "idle") {
              return;
            } else continue;
          }
        }
        if (this.options.skip?.(key, slot.pending as T)) {
          slot.pending = undefined;
          slot.hasPending = false;
          slot.queued = false;
          if (this.settleWaiters.length) this.checkSettled();
          continue;
        }
        if (this.window > 0 && !slot.immediate) {
          // Items pushed meanwhile replace `pending`: the run takes the newest.
          const wait = slot.lastStart + this.window - performance.now();
          if (wait > 0) await this.schedule.throttle(slot, wait);
          else await nextTurn();
          if (signal.aborted) return;
        }
        if (!(await this.takeAndProcess(key, slot, signal))) return;
      }
    } finally {
      this.schedule.forget(slot);
      if (this.slots.get(key) === slot) this.slots.delete(key);
      this.checkSettled();
    }
  }

  /**
   * Takes the pending item and processes it under a permit; false when the signal aborted
   * first. A frame of its own: the worker's loop, suspended while idle, holds no item.
   */
  private async takeAndProcess(key: string, slot: Slot<T>, signal: AbortSignal): Promise<boolean> {
    const item = slot.pending as T;
    slot.pending = undefined;
    slot.hasPending = false;
    slot.againAt = undefined;
    const permit = this.permits.acquire();
    if (permit) await permit;
    if (signal.aborted) {
      this.permits.release();
      return false;
    }
    await this.processTaken(key, slot, item, signal);
    return true;
  }

  /** Processes the item taken from `slot` (its permit held) and keeps what it asked for next. */
  private async processTaken(key: string, slot: Slot<T>, item: T, signal: AbortSignal): Promise<void> {
    slot.busy = true;
    slot.lastStart = performance.now();
    this.dequeued(slot);
    let outcome: Outcome<T> | void;
    try {
      outcome = await this.options.process(key, item, signal);
    } catch (error) {
      if (!signal.aborted) this.logger.error("processing failed", { key, error });
      outcome = undefined;
    } finally {
      slot.busy = false;
      this.permits.release();
      this.observer?.finished((performance.now() - slot.lastStart) / 1000);
    }
    // Kept only for a re-run: an idle worker outlives its run by `idleMs`, and after a burst
    // every object has one; a body held for nothing would be a second copy per object.
    slot.current = outcome?.again !== undefined ? (outcome.item ?? item) : undefined;
    // Kept even when an item is pending: taking that item cancels the re-run, but if `skip`
    // drops it, the re-run must still happen (else a retry waits for an unrelated event).
    if (outcome?.again !== undefined) {
      slot.againAt = Date.now() + Math.max(0, outcome.again);
      this.observer?.retried();
    }
    if (this.settleWaiters.length && !slot.hasPending) this.checkSettled();
  }

  /** A key that had nothing waiting gets an item: the queue grew by one. */
  private queued(slot: Slot<T>): void {
    slot.queued = true;
    slot.queuedAt = performance.now();
    this.observer?.added();
  }

  /** The taken item starts processing; one pushed while it waited for a worker slot is queued anew. */
  private dequeued(slot: Slot<T>): void {
    slot.queued = false;
    this.observer?.started((slot.lastStart - slot.queuedAt) / 1000);
    if (slot.hasPending) this.queued(slot);
  }

  /** The queue's gauges, walked at scrape time so that the hot path keeps no extra books. */
  private figures(): QueueFigures {
    const now = performance.now();
    let depth = 0;
    let unfinished = 0;
    let longest = 0;
    for (const slot of this.slots.values()) {
      if (slot.queued) depth++;
      if (!slot.busy) continue;
      const ran = now - slot.lastStart;
      unfinished += ran;
      if (ran > longest) longest = ran;
    }
    return { depth, unfinishedSeconds: unfinished / 1000, longestSeconds: longest / 1000 };
  }

  /** On abort: every waiting worker wakes up, sees the aborted signal and exits. */
  private wakeAll(): void {
    this.schedule.wakeAll(this.slots.values());
    this.permits.grantAll(); // each is balanced by its worker's release()
  }
}

/** One turn of the event loop: events that arrived in the same network chunk are all pushed by then. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
