// What one cycle plans (CyclePlan: results, the user's patch, bookkeeping, the runs) and what kobun
// keeps of an object in memory between cycles (ObjectState). Apart from cycle.ts so that due.ts,
// which cycle.ts calls, can read them without importing cycle.ts back.

import type { Cause, HandlerSpec } from "../declaring/index.ts";
import type { Essence } from "./essence.ts";
import type { BookkeepingChange } from "./progress.ts";
import type { RunOutcome } from "./runner.ts";

/** What kobun remembers of an object in memory while it runs (never needed for correctness after a restart). */
export interface ObjectState {
  memo: Record<string, any>;
  /**
   * Resume handlers in this operator process: "unseen" before the object's first cycle; "due" from
   * a first sight that is not a create nor a deletion, until a cycle completes (so a failed resume
   * handler is retried as others are); "done" after. One field, not two: it is kept per known object.
   */
  resume: "unseen" | "due" | "done";
  /** The handler running now, as "<id> on <namespace>/<name>": named if shutdown abandons it. */
  running?: string;
}

export interface HandlerRun {
  spec: HandlerSpec;
  outcome: RunOutcome;
  retry: number;
  /** How long the handler ran. */
  seconds: number;
}

export interface CyclePlan {
  /** The Kopf-style cause; "reconcile" for an `on.reconcile` (reconciling/reconcile/reconcile-cycle.ts). */
  cause: Cause | "noop" | "free" | "reconcile";
  /** The merge-patch the handlers wrote into `patch` (may hold status). */
  user: Record<string, any> | undefined;
  /** Handler results by id, for `status.<id>`. */
  results: Record<string, unknown>;
  bookkeeping: BookkeepingChange;
  /** The finalizer's change: reconciling/finalizer.ts sets it (never the cycle). */
  finalizer: "add" | "remove" | undefined;
  /** Add the finalizer alone and run the cycle again before any handler has side effects. */
  finalizerFirst: boolean;
  /** A reconcile failed (it runs again after a backoff, or at the next change): its result is "error". */
  error?: Error;
  /** The cause completed in this cycle (every handler of it finished, or there were none). */
  done?: boolean;
  /** Once a cause with handlers completed: how many of them succeeded and failed for good (Kopf's summary line). */
  tally?: { succeeded: number; failed: number };
  /** ms until the earliest delayed handler is due. */
  delay: number | undefined;
  runs: HandlerRun[];
  /** The essence the handlers saw (with their own patch applied); undefined when deleting. */
  essence: Essence | undefined;
  /** The resourceVersion the handlers' last own write to the object returned (ctx.api): the newest version known. */
  newest?: string;
}

/** What the cycle must know of kobun's finalizer, which reconciling/finalizer.ts decides and writes. */
export interface FinalizerTerms {
  /** A deletion is ours to handle (we hold the object): its delete handlers run; else it frees the object. */
  readonly cleanup: boolean;
  /** The finalizer is being added: no handler runs before it is written (Kopf's order). */
  readonly holdFirst: boolean;
}
