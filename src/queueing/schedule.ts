// queueing/'s scheduler: when a key runs. Each key has a slot (slot.ts) with a stage: idle,
// waiting for a requested re-run (`again`), inside the batch window's leading-edge throttle
// (`window`), in the lines of keys ready to run (`ready`), or processing (`busy`). What it waits for is
// a timer (its window on the machine's clock, its re-run in handler time: util/clock.ts), one shared
// next-turn callback, or one shared reaper interval that drops slots idle for `idleMs`. No slot
// holds a promise. workers.ts runs the keys.
// The ready keys stand in two lines (lines.ts): a key whose item is news (a watch event) runs
// before the keys that only re-check (a relist's objects, re-runs), FIFO within each line.

import { clock } from "../util/index.ts";
import { ReadyLines } from "./lines.ts";
import type { Slot } from "./slot.ts";

/** A slot's `timer` while its re-run waits for the shared next turn instead of a timer. */
const NEXT_TURN = Symbol("next turn") as unknown as ReturnType<typeof setTimeout>;

export interface ScheduleEvents<T> {
  /** The slot's window is over: its newest item may run. */
  due(slot: Slot<T>): void;
  /** The slot's requested re-run time has come. */
  rerun(slot: Slot<T>): void;
  /** The slot has been idle for `idleMs`. */
  expired(slot: Slot<T>): void;
}

export class Schedule<T> {
  /** Keys whose item may run: news first, then re-checks, each in the order they became ready. */
  private lines: ReadyLines<Slot<T>>;
  /** Slots whose window ends at the next turn of the event loop: one callback for all of them. */
  private nextTurn: Slot<T>[] = [];
  /** Slots whose re-run is due at the next turn (their `timer` is NEXT_TURN until it comes or is cancelled). */
  private reruns: Slot<T>[] = [];
  private turn: ReturnType<typeof setImmediate> | undefined;
  private reaper: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly idleMs: number,
    private readonly slots: ReadonlyMap<string, Slot<T>>,
    private readonly on: ScheduleEvents<T>,
    prioritized = true,
  ) {
    this.lines = new ReadyLines(prioritized);
  }

  /**
   * The batch window: the slot becomes due after `ms`; pushes meanwhile only replace `pending`.
   * A window already over still waits one turn, so that events delivered together merge.
   */
  throttle(slot: Slot<T>, ms: number): void {
    slot.stage = "window";
    if (ms > 0) {
      slot.timer = setTimeout(() => {
        slot.timer = undefined;
        this.on.due(slot);
      }, ms);
      return;
    }
    this.nextTurn.push(slot);
    this.turn ??= setImmediate(() => this.nextTurnCame());
  }

  /** The slot's item may run: it gets in its line (or moves up to the first, if its item became news meanwhile). */
  ready(slot: Slot<T>): void {
    slot.stage = "ready";
    this.lines.add(slot, slot.priority);
  }

  /** The key longest in the first line that has one, if any. */
  next(): Slot<T> | undefined {
    return this.lines.take();
  }

  /**
   * Waits for the slot's `againAt`; one due already (the finalizer first, a re-check) waits for the
   * shared next turn, not a timer of its own.
   */
  rerunAt(slot: Slot<T>, againAt: number): void {
    slot.stage = "again";
    const ms = againAt - clock().now();
    if (ms <= 0) {
      slot.timer = NEXT_TURN;
      this.reruns.push(slot);
      this.turn ??= setImmediate(() => this.nextTurnCame());
      return;
    }
    slot.timer = clock().timer(ms, () => {
      slot.timer = undefined;
      this.on.rerun(slot);
    });
  }

  /** Cancels the slot's timer (a push comes before its re-run). */
  cancel(slot: Slot<T>): void {
    if (slot.timer === undefined) return;
    if (typeof slot.timer === "function") slot.timer();
    else if (slot.timer !== NEXT_TURN) clearTimeout(slot.timer);
    slot.timer = undefined;
  }

  private nextTurnCame(): void {
    this.turn = undefined;
    for (const due of this.nextTurn.splice(0)) this.on.due(due);
    for (const slot of this.reruns.splice(0)) {
      if (slot.timer !== NEXT_TURN) continue; // cancelled meanwhile
      slot.timer = undefined;
      this.on.rerun(slot);
    }
  }

  /** The slot has nothing to do: the reaper drops it after `idleMs` unless something comes. */
  idle(slot: Slot<T>): void {
    slot.stage = "idle";
    slot.idleSince = Date.now();
    if (this.reaper) return;
    const every = Math.max(10, Math.min(this.idleMs / 2, 1000));
    // It walks the slots: only keys active within `idleMs` are there, and no set of idle ones is kept.
    this.reaper = setInterval(() => {
      const now = Date.now();
      for (const slot of this.slots.values()) {
        if (slot.stage === "idle" && now - slot.idleSince >= this.idleMs) this.on.expired(slot);
      }
      if (this.slots.size === 0) this.stopReaper();
    }, every);
  }

  /** On abort: every timer and the next-turn callback end, the reaper stops. */
  stop(): void {
    this.stopReaper();
    if (this.turn) clearImmediate(this.turn);
    this.turn = undefined;
    this.nextTurn = [];
    this.lines.clear();
    for (const slot of this.reruns) slot.timer = undefined;
    this.reruns = [];
    for (const slot of this.slots.values()) this.cancel(slot);
  }

  private stopReaper(): void {
    if (this.reaper) clearInterval(this.reaper);
    this.reaper = undefined;
  }
}
