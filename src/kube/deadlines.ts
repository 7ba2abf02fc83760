// Request deadlines: every request (not a watch) gets a signal that aborts when it has had no
// complete answer for `ms`, or when the caller's signal aborts. Requests that start within the
// same slot of time with the same caller's signal share one signal: its timer fires `ms` after
// the slot closes, when each of them is at least `ms` old (and at most a slot older). So the
// hot path pays for a Map lookup and a count, not an AbortController, a listener on the
// caller's (long-lived, much-listened) signal and a timer per request.

import { onAbort } from "../util/index.ts";

export interface Deadline {
  signal: AbortSignal;
  /** True when the deadline (not the caller) aborted the request. */
  readonly expired: boolean;
  end(): void;
}

interface Slot {
  readonly controller: AbortController;
  readonly timer: ReturnType<typeof setTimeout>;
  readonly forget: () => void;
  inflight: number;
  open: boolean;
}

const NEVER_ABORTED: Deadline = { signal: undefined as unknown as AbortSignal, expired: false, end() {} };

export class Deadlines {
  /** The open slots, by the caller's signal (undefined: requests without one). */
  private readonly open = new Map<AbortSignal | undefined, Slot>();
  private openedAt = -Infinity;
  private readonly slotMs: number;

  constructor(readonly ms: number) {
    this.slotMs = Math.max(10, Math.min(1000, ms / 4));
  }

  start(parent?: AbortSignal): Deadline {
    if (this.ms <= 0) return parent ? { signal: parent, expired: false, end() {} } : NEVER_ABORTED; // deadlines off
    if (parent?.aborted) return { signal: parent, expired: false, end() {} };
    const now = performance.now();
    if (now - this.openedAt >= this.slotMs) this.rotate(now);
    let slot = this.open.get(parent);
    if (!slot || slot.controller.signal.aborted) {
      slot = this.slot(parent);
      this.open.set(parent, slot);
    }
    slot.inflight++;
    return new SlotDeadline(slot, parent);
  }

  /** Closes the open slots (those with nothing in flight are dropped); later requests open new ones. */
  private rotate(now: number): void {
    for (const slot of this.open.values()) {
      slot.open = false;
      if (slot.inflight === 0) dispose(slot);
    }
    this.open.clear();
    this.openedAt = now;
  }

  private slot(parent: AbortSignal | undefined): Slot {
    const controller = new AbortController();
    const timer = setTimeout(() => {
      if (this.open.get(parent) === slot) this.open.delete(parent);
      slot.forget();
      controller.abort(new DOMException(`no complete answer within ${this.ms} ms`, "TimeoutError"));
    }, this.openedAt + this.slotMs + this.ms - performance.now());
    timer.unref?.();
    const forget = parent ? onAbort(parent, () => controller.abort(parent.reason)) : noop;
    const slot: Slot = { controller, timer, forget, inflight: 0, open: true };
    return slot;
  }
}

/** One request's hold on its slot: an object of a class, no closures or getter made per request. */
class SlotDeadline implements Deadline {
  private ended = false;

  constructor(
    private readonly slot: Slot,
    private readonly parent: AbortSignal | undefined,
  ) {}

  get signal(): AbortSignal {
    return this.slot.controller.signal;
  }

  get expired(): boolean {
    return this.slot.controller.signal.aborted && !this.parent?.aborted;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (--this.slot.inflight === 0 && !this.slot.open) dispose(this.slot);
  }
}

function dispose(slot: Slot): void {
  clearTimeout(slot.timer);
  slot.forget();
}

const noop = () => {};
