// One key's slot, the pure part of queueing/: a latest-wins mailbox (a newer item replaces the
// pending one) and the books on it (its stage, when it was queued and last ran, its line).
// The transitions here change a slot and nothing else: no timer, no line, no observer; what
// follows from them (arming a window, waking a waiter, counting a metric) is workers.ts's.

import type { CancelTimer } from "../util/index.ts";
import type { Lined, Priority } from "./lines.ts";

export type Stage = "idle" | "again" | "window" | "ready" | "busy";

/** A slot's `timer` while its re-run waits for the shared next turn instead of a timer. */
const NEXT_TURN = Symbol("next turn") as unknown as ReturnType<typeof setTimeout>;

export interface Slot<T> extends Lined {
  readonly key: string;
  pending: T | undefined;
  hasPending: boolean;
  /** The last processed item, re-used for a delayed re-run. */
  current: T | undefined;
  /** Epoch ms of a requested re-run. */
  againAt: number | undefined;
  stage: Stage;
  /** The window's timer (the machine's clock), or the re-run's (handler time: a cancelling call). */
  timer: ReturnType<typeof setTimeout> | CancelTimer | undefined;
  idleSince: number;
  /** The pending item skips the batch window. */
  immediate: boolean;
  /** The pending item's line when ready: "high" once any item collapsed into it was news. */
  priority: Priority;
  /** The line of a requested re-run: the taken item's if due at once (it continues that work), else "low". */
  rerunAs: Priority;
  /**
   * The requested re-run waits a batch window or longer: that wait kept the pace, no window follows
   * (on a virtual clock, whose hours pass in real ms, a window would only slow the test down).
   */
  paced: boolean;
  /** Its place in the ready lines (lines.ts): the live entry's ticket (0: not in line) and line. */
  ticket: number;
  lane: Priority;
  /** When the key last started processing (ms, performance clock), for the window. */
  lastStart: number;
  /** An item is waiting to start processing: the queue's depth. */
  queued: boolean;
  /** When that item was queued (ms, performance clock), for workqueue_queue_duration_seconds. */
  queuedAt: number;
}

export function newSlot<T>(key: string, item: T, immediate: boolean, priority: Priority): Slot<T> {
  return {
    key, pending: item, hasPending: true, current: undefined, againAt: undefined, stage: "idle", timer: undefined,
    idleSince: 0, immediate, priority, rerunAs: priority, paced: false, ticket: 0, lane: priority,
    lastStart: -Infinity, queued: true, queuedAt: performance.now(),
  };
}

/**
 * Puts a newer item into the slot, replacing any pending one. True when the slot had nothing
 * waiting (the queue grew by one). The item's priority only raises the slot's: of the items
 * that collapse into one, the highest counts.
 */
export function offer<T>(slot: Slot<T>, item: T, immediate: boolean, priority: Priority): boolean {
  const grew = !slot.queued;
  if (grew) queue(slot, priority);
  else if (priority === "high") slot.priority = "high";
  slot.pending = item;
  slot.hasPending = true;
  slot.immediate = immediate;
  return grew;
}

/** The slot had nothing waiting and gets an item: when it was queued, and its line. */
export function queue<T>(slot: Slot<T>, priority: Priority): void {
  slot.queued = true;
  slot.priority = priority;
  slot.queuedAt = performance.now();
}

/** Takes the pending item to process it: the slot is busy, its re-run (if any) superseded. */
export function take<T>(slot: Slot<T>): T {
  const item = slot.pending as T;
  slot.pending = undefined;
  slot.hasPending = false;
  slot.againAt = undefined;
  slot.stage = "busy";
  slot.rerunAs = slot.priority;
  slot.lastStart = performance.now();
  slot.queued = false;
  return item;
}

/** Drops the pending item and any requested re-run (the key's object is gone); a running item goes on. */
export function clear<T>(slot: Slot<T>): void {
  if (slot.hasPending) slot.queued = false;
  slot.pending = undefined;
  slot.hasPending = false;
  slot.againAt = undefined;
}
