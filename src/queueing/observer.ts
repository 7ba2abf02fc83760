// What queueing/ tells about its queue, without knowing who listens: runtime/ wires it to
// client-go's workqueue_* metrics. The calls are made on the hot path, so an observer must
// only add numbers; the gauges (depth, work in progress) are read at scrape time instead.

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
