// What a Workers (workers.ts) is built from, and what one run may ask for next.

import type { Logger } from "../util/index.ts";
import type { Priority } from "./lines.ts";
import type { QueueObserver } from "./observer.ts";

export type { Priority } from "./lines.ts";

/** How one item is queued. */
export interface PushOptions {
  /** Skip the batch window (e.g. objects from a LIST are already the latest state). */
  immediate?: boolean;
  /** Its line once ready; "high" by default. Of the items that collapse into one, the highest counts. */
  priority?: Priority;
}

export interface Outcome<T> {
  /** Run `process()` again for this key after this many ms, unless a newer item comes first. */
  again?: number;
  /**
   * That re-run is a retry or a requeue, behind news however soon it is due; without it one due at once
   * continues the same work, in the line of the run before it.
   */
  behindNews?: boolean;
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
  // The three timings have no defaults here: they are settings (workers.batchWindow, limit,
  // idleTimeout), whose defaults the settings schema alone writes; the reconciler passes them.
  /** Batch window in ms: a key runs at most once per window (the first item of a quiet key at once). */
  window: number;
  /** How many keys may be processing at the same time. */
  limit: number;
  /** How long a worker with nothing to do stays alive, in ms. */
  idleMs: number;
  /** Parent signal: aborting it is like `close(0)`. */
  signal?: AbortSignal;
  logger?: Logger;
  name?: string;
  /**
   * Whether ready keys stand in two lines, news first (lines.ts); false: one FIFO line.
   * A setting (workers.priority); the reconciler passes it. True when not given.
   */
  prioritized?: boolean;
  /** Hears of adds, waits, work and re-runs (the workqueue_* metrics); none by default. */
  observer?: QueueObserver;
}
