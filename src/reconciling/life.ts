// One object's life in the reconciler, as pure functions of its phase: which events are
// worth a cycle (`admits`, `superseded`), what a cycle starts from (`begin`), and where a
// cycle's outcome leads (`step`: next phase, when to run again, with which body). No I/O,
// no clock of its own (`now` is passed in): reconciler.ts does the waiting and the writing,
// test/reconciling/life.test.ts walks every transition without a network.
//
//   phase        │ input (a cycle's outcome)          │ next phase        │ run again
//   ─────────────┼────────────────────────────────────┼───────────────────┼──────────────────────
//   any          │ begin: event not newer than our    │ (unchanged)       │ — (skipped; but a
//                │   write (not rechecking)           │                   │   rechecking phase runs its body)
//   refused(c)   │ begin: content still c             │ refused(c)        │ — (on.event only)
//   any          │ begin                              │ handling(n)       │ (the cycle runs)
//   handling(n)  │ written, finalizer added first     │ holding           │ at once, server's body
//   handling(n)  │ written, others changed it meanwhile│ rechecking(body) │ at once, server's body
//   handling(n)  │ written, a handler delayed         │ waiting           │ after the delay
//   handling(n)  │ written, all done                  │ idle              │ — (the next event)
//   handling(n)  │ failed (the write, or the read)    │ failing(n+1)      │ backoff 1 s·2ⁿ, ≤ 60 s
//   handling(n)  │ refused as too large               │ refused(content)  │ — (until it changes)
//   handling(n)  │ lost (a freeze took it)            │ idle, write forgotten │ — (the relist on resume)
//   handling(n)  │ stopped (shutdown)                 │ idle              │ —
//   any          │ gone (deleted, or 404 on write)    │ (forgotten)       │ —
//
// `n` counts the failed writes in a row (reset by a good one). The phases that asked to run
// again (holding, rechecking, waiting, failing) keep an item queued behind them that equals
// our own write: it may be the server's answer to it, the freshest state known.
//
// Daemons and timers (issue 13) are a second, independent part of the life, not flags here:
// one BackgroundPhase per daemon or timer (background-phases.ts), moved by their own inputs
// (object admitted / filters stop matching / freeze / daemon exited / timer due) in the same pure
// style; the finalizer table (finalizer.ts) counts them in "needs one", and a deletion runs the
// delete handlers only once every one of them has stopped.

import type { KubeObject } from "../kube/index.ts";
import { compareResourceVersions } from "../kube/index.ts";
import { backoffDelay } from "../util/index.ts";

export type Phase =
  | { kind: "idle" } //                     handled: nothing due until the object changes
  | { kind: "handling"; failures: number } // a cycle is running (after `failures` failed writes)
  | { kind: "holding" } //                  the finalizer was added alone: the handlers run next
  | { kind: "rechecking"; body: KubeObject } // our write's answer showed others' change: handle it
  | { kind: "waiting" } //                  a handler is delayed (a retry, or its backoff)
  | { kind: "failing"; failures: number } // the write failed: it is retried with backoff
  | { kind: "refused"; content: string }; // the write was refused as too large for this content

export type Outcome =
  | {
      kind: "written";
      /** The body the cycle ran on, and the server's answer to its write (when one was sent and answered). */
      body: KubeObject;
      answer?: KubeObject;
      /** Whether the plan had anything to write (a resourceVersion to remember). */
      wrote: boolean;
      next: "done" | "finalizer-first" | "changed" | "delayed";
      delay?: number;
    }
  | { kind: "failed"; error: unknown }
  | { kind: "refused"; content: string }
  | { kind: "lost" }
  | { kind: "stopped" }
  | { kind: "gone" };

/** What the reconciler keeps of one object between cycles. */
export interface Life {
  phase: Phase;
  /** Our last write: its resourceVersion and when it was made (ms). */
  wrote?: { rv: string; at: number };
}

/** Where a cycle's outcome leads: `life` undefined means forget the object. */
export interface Step {
  life: Life | undefined;
  /** Run again after this many ms (0: at once), unless a newer event comes first. */
  again?: number;
  /** That run is a retry or a requeue (waiting, failing): behind news even when due at once. */
  behindNews?: boolean;
  /** The body to run again with (the server's answer to our write), if not the last one. */
  body?: KubeObject;
}

/** With versions that have no order (kube/versions.ts), an equal one is our echo only this long. */
export const UNORDERED_ECHO_MS = 5000;
const MAX_BACKOFF_MS = 60_000;

/** The idle phase: one shared value (phases are replaced by the transitions, never changed). */
export const IDLE: Phase = Object.freeze({ kind: "idle" });

export const fresh = (): Life => ({ phase: IDLE });

/**
 * Whether `rv` is not newer than our own last write. `orEqual`: our very version is stale
 * too (the watch's echo of our write); for an item queued behind a run-again phase it is not.
 */
export function isStale(life: Life | undefined, rv: string | undefined, now: number, orEqual: boolean): boolean {
  const wrote = life?.wrote;
  if (!wrote || !rv) return false;
  const order = compareResourceVersions(rv, wrote.rv);
  if (order !== undefined) return order < 0 || (orEqual && order === 0);
  return orEqual && rv === wrote.rv && now - wrote.at < UNORDERED_ECHO_MS;
}

/** Whether a phase asked to run again (so an item equal to our write is wanted, not an echo). */
export function runsAgain(phase: Phase): boolean {
  const { kind } = phase;
  return kind === "holding" || kind === "rechecking" || kind === "waiting" || kind === "failing";
}

/** On arrival from the watch: whether an event is worth queueing. A deletion always is. */
export function admits(life: Life | undefined, deleted: boolean, rv: string | undefined, now: number): boolean {
  return deleted || !isStale(life, rv, now, true);
}

/** For an item that waited behind its busy object: whether it needs no cycle now. */
export function superseded(life: Life | undefined, deleted: boolean, rv: string | undefined, now: number): boolean {
  if (deleted || !life || life.phase.kind === "rechecking") return false;
  return isStale(life, rv, now, !runsAgain(life.phase));
}

export type Begin =
  | { kind: "skip" } // older than our write: nothing to do
  | { kind: "events-only"; body: KubeObject } // on.event handlers, but the same write would be refused again
  | { kind: "cycle"; body: KubeObject; life: Life };

/** What a cycle of `body` starts from; `content` names the body's content (only asked when refused). */
export function begin(
  life: Life | undefined, body: KubeObject, now: number, content: (body: KubeObject) => string,
): Begin {
  const current = life ?? fresh();
  const phase = current.phase;
  if (isStale(current, body.metadata.resourceVersion, now, false)) {
    // Older than our write; but if that write showed a change made meanwhile, the re-check must
    // still happen, with the newest body known.
    if (phase.kind !== "rechecking") return { kind: "skip" };
    body = phase.body;
  }
  if (phase.kind === "refused" && phase.content === content(body)) return { kind: "events-only", body };
  const failures = phase.kind === "failing" ? phase.failures : 0;
  const handling: Phase = { kind: "handling", failures };
  return { kind: "cycle", body, life: withPhase(current, handling) };
}

/** The transition: where the outcome of a cycle begun from `life` leads. */
export function step(life: Life, outcome: Outcome, now: number): Step {
  const failures = life.phase.kind === "handling" ? life.phase.failures : 0;
  switch (outcome.kind) {
    case "gone":
      return { life: undefined };
    case "lost":
      // Forget our write, so that the relist's copy of this very version is not dropped as our
      // echo: it carries the progress (a retry due) that must run after the resume.
      return { life: { phase: IDLE } };
    case "stopped":
      return { life: withPhase(life, IDLE) };
    case "refused":
      return { life: withPhase(life, { kind: "refused", content: outcome.content }) };
    case "failed": {
      const failing: Phase = { kind: "failing", failures: failures + 1 };
      return { life: withPhase(life, failing), again: backoff(failures + 1), behindNews: true };
    }
    case "written":
      return written(life, outcome, now);
  }
}

/** The same life in another phase (only its two parts: `life` may be a record holding more). */
function withPhase(life: Life, phase: Phase): Life {
  return life.wrote ? { phase, wrote: life.wrote } : { phase };
}

/** The backoff of the n-th failed write in a row: 1 s, 2 s, 4 s, … up to a minute. */
export function backoff(failures: number): number {
  // No jitter: one object's retries are not a herd, and the delay is shown in its Warning Event.
  return backoffDelay(failures - 1, { initial: 1000, max: MAX_BACKOFF_MS });
}

function written(life: Life, outcome: Extract<Outcome, { kind: "written" }>, now: number): Step {
  const body = outcome.answer ?? outcome.body;
  const rv = body.metadata.resourceVersion;
  const wrote = !outcome.wrote ? life.wrote : rv !== undefined ? { rv, at: now } : undefined;
  const next = (phase: Phase): Life => (wrote ? { phase, wrote } : { phase });
  switch (outcome.next) {
    case "finalizer-first":
      return { life: next({ kind: "holding" }), again: 0, body };
    case "changed":
      return { life: next({ kind: "rechecking", body }), again: 0, body };
    case "delayed":
      return { life: next({ kind: "waiting" }), again: outcome.delay ?? 0, body, behindNews: true };
    case "done":
      return { life: next(IDLE), ...(outcome.answer ? { body } : {}) };
  }
}
