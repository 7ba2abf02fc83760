// What queueing/ tells about its queue, without knowing who listens: runtime/ wires it to
// client-go's workqueue_* metrics. The calls are made on the hot path, so an observer must
// only add numbers; the gauges (depth, work in progress) are read at scrape time instead.

import type { Slot } from "./slot.ts";

/** Live figures of one queue, computed when asked (a walk over its keys). */
export interface QueueFigures {
  /** Keys with an item waiting to be processed. */
  depth: number;
  /** Seconds that the items processing now have been running, summed. */
  unfinishedSeconds: number;
  /** Seconds that the longest-running item processing now has been running (0 when none). */
  longestSeconds: number;
}

export interface QueueObserver {
  /** Called once by the queue with a reader of its live figures. */
  watch?(read: () => QueueFigures): void;
  /** An item was queued for a key that had none waiting (a newer one replacing a waiting one is not an add). */
  added(): void;
  /** An item left the queue to be processed after waiting `queuedSeconds`. */
  started(queuedSeconds: number): void;
  /** Its processing ended after `workSeconds`. */
  finished(workSeconds: number): void;
  /** The processing asked to run the key again later (a retry or a timed re-run). */
  retried(): void;
}

/** The queue's gauges, walked at scrape time so that the hot path keeps no extra books. */
export function figuresOf(slots: Iterable<Slot<unknown>>): QueueFigures {
  const now = performance.now();
  let depth = 0;
  let unfinished = 0;
  let longest = 0;
  for (const slot of slots) {
    if (slot.queued) depth++;
    if (slot.stage !== "busy") continue;
    const ran = now - slot.lastStart;
    unfinished += ran;
    if (ran > longest) longest = ran;
  }
  return { depth, unfinishedSeconds: unfinished / 1000, longestSeconds: longest / 1000 };
}
