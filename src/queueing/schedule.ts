// queueing/'s scheduler: when a key runs. Each key has a slot, a latest-wins mailbox (a
// newer item replaces the pending one), the leading-edge throttle of the batch window, a
// delayed re-run (`againAt`), and idleness: an idle slot is reaped after `idleMs` by one
// shared interval, not a timer per slot. workers.ts runs the keys; this file only waits.

export interface Slot<T> {
  pending: T | undefined;
  hasPending: boolean;
  /** The last processed item, re-used for a delayed re-run. */
  current: T | undefined;
  /** Epoch ms of a requested re-run. */
  againAt: number | undefined;
  wake: (() => void) | undefined;
  idleSince: number;
  busy: boolean;
  /** Ends the batch window early (on abort). */
  windowEnd?: (() => void) | undefined;
  /** The pending item skips the batch window. */
  immediate: boolean;
  /** When the key last started processing (ms, performance clock), for the window. */
  lastStart: number;
  /** An item is waiting to start processing (pending, or taken and waiting for a worker slot): the queue's depth. */
  queued: boolean;
  /** When that item was queued (ms, performance clock), for workqueue_queue_duration_seconds. */
  queuedAt: number;
}

export function newSlot<T>(item: T, immediate: boolean): Slot<T> {
  return { pending: item, hasPending: true, current: undefined, againAt: undefined, wake: undefined, idleSince: 0, busy: false, immediate, lastStart: -Infinity, queued: true, queuedAt: performance.now() };
}

export class Schedule<T> {
  private readonly idle = new Set<Slot<T>>();
  private reaper: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly idleMs: number) {}

  /** The slot's worker has ended. */
  forget(slot: Slot<T>): void {
    this.idle.delete(slot);
  }

  /**
   * Waits for a push, the re-run time, or idleness. Synchronous exit decisions avoid races with
   * push(). No listener is added to the shared signal per worker (removing thousands of them
   * is quadratic): abort wakes every waiting worker through `wakeAll()` instead.
   */
  wait(slot: Slot<T>): Promise<"push" | "again" | "idle"> {
    if (slot.againAt === undefined && this.idleMs <= 0) return Promise.resolve("idle");
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = (why: "push" | "again" | "idle") => {
        if (timer) clearTimeout(timer);
        this.idle.delete(slot);
        slot.wake = undefined;
        resolve(why);
      };
      if (slot.againAt !== undefined) {
        timer = setTimeout(() => {
          slot.againAt = undefined;
          done("again");
        }, Math.max(0, slot.againAt - Date.now()));
        slot.wake = () => done("push");
      } else {
        slot.idleSince = Date.now();
        this.idle.add(slot);
        this.armReaper();
        // The reaper calls wake with the slot still idle and nothing pending: that means "exit".
        slot.wake = () => done(slot.hasPending ? "push" : "idle");
      }
    });
  }

  private armReaper(): void {
    if (this.reaper) return;
    const every = Math.max(10, Math.min(this.idleMs / 2, 1000));
    this.reaper = setInterval(() => {
      const now = Date.now();
      for (const slot of this.idle) {
        if (now - slot.idleSince >= this.idleMs && !slot.hasPending) slot.wake?.();
      }
      if (this.idle.size === 0 && this.reaper) {
        clearInterval(this.reaper);
        this.reaper = undefined;
      }
    }, every);
  }

  /** The batch window: pushes meanwhile only replace `pending`; abort ends it early. */
  throttle(slot: Slot<T>, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        slot.windowEnd = undefined;
        resolve();
      }, ms);
      slot.windowEnd = () => {
        clearTimeout(timer);
        slot.windowEnd = undefined;
        resolve();
      };
    });
  }

  /** On abort: every slot's wait and window end at once; the reaper stops. */
  wakeAll(slots: Iterable<Slot<T>>): void {
    if (this.reaper) clearInterval(this.reaper);
    this.reaper = undefined;
    for (const slot of slots) {
      slot.windowEnd?.();
      slot.wake?.();
    }
  }
}
