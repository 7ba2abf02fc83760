// queueing/'s runner: one slot per key (an object's uid), so that the events of one object
// are processed strictly one at a time while many objects proceed concurrently, at most
// `limit` at once. When a key runs is the scheduler's (schedule.ts).
// A key is plain data until it runs: keys whose window is over wait in a FIFO of ready keys,
// and a worker (an async frame) exists only while a key is processing, so a burst of 20,000
// objects costs `limit` frames, not 20,000 (issue 15). The busy slots are the running workers:
// no task of its own per run, and close() names the keys still busy after the grace.
//
// What it does:
// - `push(key, item)` keeps only the newest pending item per key ("latest wins"); a burst that
//   arrives while the key is busy or inside the batch window collapses into one item.
// - the batch window (default 100 ms, 0 allowed) is a leading-edge throttle: the first item of a
//   quiet key runs at once (after one turn of the event loop, so that events delivered together
//   merge), and then a key runs at most once per window, with the newest item. A create is
//   handled in about a millisecond, and a burst of changes still costs one run per window.
//   With a window of 0 no timer is created at all on the hot path.
// - a worker limit bounds how many keys are *processing* at once (counted here);
//   keys that only wait (for an item, a permit, a retry timer, their window) hold no worker;
//   ready keys start in the order they became ready, news before re-checks (lines.ts): a
//   push is news unless it says `priority: "low"` (a relist's objects); a delayed re-run is low, one due
//   at once (a finalizer added first, a re-check) continues in the line of the item it follows.
// - `process()` may ask to run again after a delay (`again`, ms) with the same or a fresher item:
//   the timer lives in the slot and is cancelled by a new push or by close().
// - an optional `skip(key, item)` drops an item that waited for its busy key but is already known
//   to be useless (a stale echo): no run, no batch-window timer.
// - idle slots are dropped after `idleMs` (one shared reaper interval, not a timer per slot).
// - `close(graceMs)` aborts the workers' signal (a TaskScope's) and waits for the busy keys.
//
// What it must never do: run two items of one key concurrently, drop the newest item of a key,
// import anything but util/, or know what a Kubernetes object is.

import { clock, TaskScope, type TaskReport } from "../util/index.ts";
import { silentLogger, type Logger } from "../util/index.ts";
import { figuresOf, type QueueObserver } from "./observer.ts";
import type { Outcome, Priority, PushOptions, WorkersOptions } from "./options.ts";
import { Schedule } from "./schedule.ts";
import { WorkMark } from "./work-mark.ts";
import { clear, newSlot, offer, queue, take, type Slot } from "./slot.ts";

export type { Outcome, Priority, PushOptions, WorkersOptions } from "./options.ts";

export class Workers<T> {
  private readonly slots = new Map<string, Slot<T>>();
  private readonly scope: TaskScope;
  private readonly window: number;
  private readonly limit: number;
  private readonly idleMs: number;
  private readonly logger: Logger;
  private readonly schedule: Schedule<T>;
  /** Keys processing now, and the most at once so far. */
  private busy = 0;
  private mostBusy = 0;
  private pumping = false;
  private readonly settleWaiters: (() => void)[] = [];
  /** close() waiting for the busy keys to end. */
  private readonly drainWaiters: (() => void)[] = [];
  private readonly observer: QueueObserver | undefined;
  private readonly work = new WorkMark();

  constructor(private readonly options: WorkersOptions<T>) {
    this.observer = options.observer;
    this.observer?.watch?.(() => figuresOf(this.slots.values()));
    this.window = options.window;
    this.limit = Math.max(1, options.limit);
    this.idleMs = options.idleMs;
    this.schedule = new Schedule<T>(this.idleMs, this.slots, {
      due: (slot) => void (slot.hasPending ? this.enqueue(slot) : this.rest(slot), this.noteWork()),
      rerun: (slot) => void (this.rerun(slot), this.noteWork()),
      expired: (slot) => this.slots.delete(slot.key),
    }, options.prioritized ?? true);
    this.logger = options.logger ?? silentLogger;
    this.scope = new TaskScope(options.name ?? "workers", options.signal); // its signal and close(); no task per run
    this.scope.signal.addEventListener("abort", () => this.stopAll(), { once: true });
  }

  /** Number of keys known (processing, waiting or idle). */
  get size(): number {
    return this.slots.size;
  }

  /** Workers alive now (each an async frame): at most `limit`, however many keys wait. */
  get workers(): number {
    return this.busy;
  }

  /** Highest number of keys processing at once (for tests and metrics). */
  get peak(): number {
    return this.mostBusy;
  }

  get signal(): AbortSignal {
    return this.scope.signal;
  }

  /**
   * Queues `item` for `key`, replacing any item of that key not yet taken by its worker.
   * `immediate`: skip the batch window; `priority`: the line once ready (options.ts).
   */
  push(key: string, item: T, how: PushOptions = {}): void {
    if (this.scope.signal.aborted) return;
    const immediate = how.immediate ?? false;
    const priority: Priority = how.priority ?? "high";
    let slot = this.slots.get(key);
    if (!slot) {
      slot = newSlot(key, item, immediate, priority);
      this.observer?.added();
      this.slots.set(key, slot);
    } else {
      if (offer(slot, item, immediate, priority)) this.observer?.added();
      // Ready in the low line and now news: it moves up (lines.ts).
      if (slot.stage === "ready" && priority === "high") this.schedule.ready(slot);
      // Busy, in its window or ready: the key takes the newest item when its turn comes.
      if (slot.stage !== "idle" && slot.stage !== "again") return this.noteWork();
    }
    this.arm(slot);
    this.noteWork();
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
    for (const slot of this.slots.values()) if (slot.stage === "busy" || slot.hasPending) return false;
    return true;
  }

  private checkSettled(): void {
    // While any key is processing nothing is settled (and no O(keys) scan runs on every completion).
    if (!this.settleWaiters.length || this.busy > 0 || !this.isSettled()) return;
    for (const resolve of this.settleWaiters.splice(0)) resolve();
  }

  /** Forgets a key's pending item and retry timer (e.g. the object is gone); a running item finishes. */
  forget(key: string): void {
    const slot = this.slots.get(key);
    if (!slot) return;
    clear(slot);
    if (slot.stage === "again") {
      this.schedule.cancel(slot);
      this.rest(slot);
    }
    this.checkSettled();
    this.noteWork();
  }

  private noteWork(): void {
    this.work.note(this.slots);
  }

  /**
   * Aborts every worker's signal and waits up to `graceMs` for them to finish; names the keys
   * still busy (as `<name>/<key>`).
   */
  async close(graceMs: number): Promise<TaskReport> {
    const deadline = Date.now() + graceMs;
    const report = await this.scope.close(graceMs); // aborting the scope's signal calls stopAll()
    if (this.busy > 0) await this.drained(deadline - Date.now());
    for (const slot of this.slots.values()) {
      if (slot.stage === "busy") report.abandoned.push(`${this.scope.name}/${slot.key}`);
    }
    return report;
  }

  /** Resolves once no key is busy, or after `ms`. */
  private async drained(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve) => {
      this.drainWaiters.push(resolve);
      timer = setTimeout(resolve, Math.max(0, ms));
    });
    clearTimeout(timer);
  }

  /** The slot has an item and is not busy: drop it if useless, else wait for the window or get in line. */
  private arm(slot: Slot<T>): void {
    this.schedule.cancel(slot); // a push comes before a requested re-run
    if (this.skips(slot)) {
      slot.pending = undefined;
      slot.hasPending = false;
      slot.queued = false;
      this.rest(slot);
      this.checkSettled();
    } else if (this.window > 0 && !slot.immediate) {
      this.schedule.throttle(slot, slot.lastStart + this.window - performance.now());
    }
    else this.enqueue(slot);
  }

  private skips(slot: Slot<T>): boolean {
    if (!this.options.skip) return false;
    try {
      return this.options.skip(slot.key, slot.pending as T);
    } catch (error) {
      this.logger.error("skip failed", { key: slot.key, error });
      return false;
    }
  }

  /** Nothing pending: wait for the requested re-run if there is one, else be idle. */
  private rest(slot: Slot<T>): void {
    if (slot.againAt !== undefined) this.schedule.rerunAt(slot, slot.againAt);
    else if (this.idleMs > 0) this.schedule.idle(slot);
    else if (this.slots.get(slot.key) === slot) this.slots.delete(slot.key);
  }

  private rerun(slot: Slot<T>): void {
    slot.againAt = undefined;
    if (slot.current === undefined) return this.rest(slot);
    queue(slot, slot.rerunAs);
    slot.immediate = slot.paced; // a wait of a window or longer kept the pace (slot.ts)
    this.observer?.added();
    slot.pending = slot.current;
    slot.hasPending = true;
    this.arm(slot);
  }

  private enqueue(slot: Slot<T>): void {
    if (this.scope.signal.aborted) return; // due in a turn that an abort (stopAll) ended midway
    this.schedule.ready(slot);
    this.pump();
  }

  /** Starts ready keys while permits are free. Re-entrant pushes (from a process()) only queue. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (let slot; this.busy < this.limit && (slot = this.schedule.next()); ) {
        if (slot.hasPending) this.start(slot);
        else this.rest(slot); // forgotten while it waited
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Takes the slot's pending item and processes it in a worker of its own, under a permit. */
  private start(slot: Slot<T>): void {
    const item = take(slot);
    this.observer?.started((slot.lastStart - slot.queuedAt) / 1000);
    if (++this.busy > this.mostBusy) this.mostBusy = this.busy;
    void clock().track(() => this.process(slot, item, this.scope.signal)); // a virtual clock's work (util/clock.ts)
  }

  /** Processes the item taken from `slot` and keeps what it asked for next. */
  private async process(slot: Slot<T>, item: T, signal: AbortSignal): Promise<void> {
    let outcome: Outcome<T> | void;
    try {
      outcome = await this.options.process(slot.key, item, signal);
    } catch (error) {
      if (!signal.aborted) this.logger.error("processing failed", { key: slot.key, error });
      outcome = undefined;
    } finally {
      if (--this.busy === 0) for (const drained of this.drainWaiters.splice(0)) drained();
      this.observer?.finished((performance.now() - slot.lastStart) / 1000);
    }
    try {
      this.took(slot, item, outcome, signal);
    } catch (error) {
      this.logger.error("worker failed", { task: slot.key, error });
    }
    this.noteWork();
  }

  /** After a run: keeps what it asked for next, and starts what may start now. */
  private took(slot: Slot<T>, item: T, outcome: Outcome<T> | void, signal: AbortSignal): void {
    if (signal.aborted) {
      if (this.slots.get(slot.key) === slot) this.slots.delete(slot.key);
      return this.checkSettled();
    }
    // Kept only for a re-run: idle slots outlive their run by `idleMs`; a body held for nothing is a second copy.
    slot.current = outcome?.again !== undefined ? (outcome.item ?? item) : undefined;
    // Kept even when an item is pending: taking that item cancels the re-run, but if `skip`
    // drops it, the re-run must still happen (else a retry waits for an unrelated event).
    if (outcome?.again !== undefined) {
      slot.againAt = clock().now() + Math.max(0, outcome.again);
      if (outcome.again > 0 || outcome.behindNews) slot.rerunAs = "low"; // a retry or a requeue: behind news
      slot.paced = outcome.again >= this.window;
      this.observer?.retried();
    }
    if (slot.hasPending) this.arm(slot);
    else this.rest(slot);
    this.pump();
    this.checkSettled();
  }

  /** On abort: timers and the ready line end; keys not processing are dropped at once. */
  private stopAll(): void {
    this.schedule.stop();
    for (const [key, slot] of this.slots) if (slot.stage !== "busy") this.slots.delete(key);
    this.checkSettled();
    this.noteWork();
  }
}
