// The lean start-up: an operator's first sync (every object that exists handled once: its children
// written, its status) is its memory's peak, the figure a pod's memory limit must hold after every
// restart, and the code it runs per object runs once per object. Through it the JIT is held back
// (Bun.unsafe.setJITPolicy: its tier-up thresholds × LEAN_JIT_POLICY), so the sync is interpreted
// instead of compiled for, and the runtime's code pages it runs are handed back while it is busy
// (runtime/code-pages.ts): 500 ms after start-up, then each trim doubles the wait up to 4 s. Its first
// seconds page in ~35 MB of the executable, its later ones a third of that, and each trim makes the
// code that runs next be read back: a trim every 500 ms through a whole sync cost the create workload
// a fifth more CPU, and a SIGTERM right at its end 81 ms instead of 38 (medians). 2,000 reconciled
// parents peak at ~65 MB instead of 92 (with trims every 500 ms, each half alone: 70.5 and 82.8), for
// about twice the CPU per parent (3.5 against 1.9 ms, side by side the day it was built;
// docs/performance.md, "The lean start-up"): kobun's CPU goes mostly to native code (fetch, TLS, JSON),
// compiled or not.
// It ends at the first quiet once every watch's first LIST has been processed (the operator is ready:
// the sync is done), not on a short clock: the JIT back in the middle of a sync compiles at the heap's
// height (20,000 parents peaked at 254 MB with a 5-minute bound, 165 without, 209 not lean). Two
// bounds for what never ends: LISTED_AT_MOST_MS after ready (a steady stream of events: never quiet),
// AT_MOST_MS from start-up (never ready: a watch that never lists, a frozen or standby replica, a sync
// longer than that). Then the normal JIT policy, and code-pages.ts's trims once quiet.

import type { Logger } from "../util/index.ts";
import { unrefTimeout, type Activity } from "./code-pages.ts";

/** How many times the JIT's tier-up thresholds are multiplied through the sync. */
export const LEAN_JIT_POLICY = 10_000;
/** How long after start-up the sync's code pages are first handed back (if it was busy meanwhile). */
export const TRIM_FIRST_EVERY_MS = 500;
/** The longest wait between two trims: each trim doubles the wait, up to this. */
export const TRIM_AT_MOST_EVERY_MS = 4_000;
/** The longest a start-up stays lean once ready (a steady stream of events: it never goes quiet). */
export const LISTED_AT_MOST_MS = 30_000;
/** The longest a start-up stays lean at all (an operator not ready by then: a watch that never lists, a standby). */
export const AT_MOST_MS = 1_800_000;

/** Where the start-up is: lean until every watch listed, then until quiet; over for good. */
export type LeanPhase = "lean" | "listed" | "over";
/** What happens to it. */
export type LeanSignal = "listed" | "quiet" | "expired" | "stopped";

/** The phase after `signal`: a quiet ends it only once every watch has listed (a LIST's wait is quiet too). */
export function nextPhase(phase: LeanPhase, signal: LeanSignal): LeanPhase {
  if (phase === "over") return "over";
  if (signal === "listed") return "listed";
  if (signal === "quiet") return phase === "listed" ? "over" : phase;
  return "over";
}

/** The wait before the next look, after a look that trimmed or found nothing ran (which keeps the wait). */
export function nextTrimWait(waitMs: number, trimmed: boolean): number {
  return trimmed ? Math.min(waitMs * 2, TRIM_AT_MOST_EVERY_MS) : waitMs;
}

/** How the lean start-up sets the JIT's policy, trims, and keeps time (tests give their own). */
export interface LeanHooks {
  setJitPolicy?: (scale: number) => void;
  later?: (run: () => void, ms: number) => () => void;
  now?: () => number;
}

export class LeanStartup {
  private phase: LeanPhase = "lean";
  private readonly setJitPolicy: (scale: number) => void;
  private readonly now: () => number;
  private readonly began: number;
  private readonly cancels: Array<() => void> = [];
  private readonly later: (run: () => void, ms: number) => () => void;
  private lastWakes: number;
  /** Trims begun while busy (said once, when it is over, not a log line each). */
  private trims = 0;
  private trimWait = TRIM_FIRST_EVERY_MS;
  private cancelLook: () => void = () => {};

  /** Begins at once: the JIT reluctant, a trim after TRIM_FIRST_EVERY_MS if anything ran. */
  constructor(
    private readonly logger: Logger, private readonly activity: Activity, private readonly trimNow: () => boolean,
    hooks: LeanHooks = {},
  ) {
    this.setJitPolicy = hooks.setJitPolicy ?? bunJitPolicy;
    this.now = hooks.now ?? Date.now;
    this.began = this.now();
    this.later = hooks.later ?? unrefTimeout;
    this.lastWakes = activity.wakes();
    this.setJitPolicy(LEAN_JIT_POLICY);
    this.look();
    this.cancels.push(() => this.cancelLook());
    this.cancels.push(this.later(() => this.signal("expired"), AT_MOST_MS));
  }

  get current(): LeanPhase {
    return this.phase;
  }

  /** Every watch's first LIST has been processed (the sync is done): over at the next quiet (now, if quiet). */
  listed(): void {
    if (this.phase !== "lean") return;
    this.signal("listed");
    if (this.activity.quiet()) return this.signal("quiet"); // the quiet came first: none may follow for long
    this.cancels.push(this.later(() => this.signal("expired"), LISTED_AT_MOST_MS));
  }

  /** The process went quiet (the heap pacer fell asleep). */
  quiet(): void {
    this.signal("quiet");
  }

  /** The operator stops: the policy back, no timer left behind. */
  stop(): void {
    this.signal("stopped");
  }

  /** The next look at the activity, `trimWait` from now (once over, the pending one is cancelled). */
  private look(): void {
    this.cancelLook = this.later(() => this.trimIfActive(), this.trimWait);
  }

  /** A trim if anything ran since the last look: a quiet spell's pages are already out. */
  private trimIfActive(): void {
    const wakes = this.activity.wakes();
    const active = !this.activity.quiet() || wakes !== this.lastWakes;
    this.lastWakes = wakes;
    if (active && this.trimNow()) this.trims++; // counted when a trim began (none where trims are off)
    this.trimWait = nextTrimWait(this.trimWait, active);
    this.look();
  }

  private signal(signal: LeanSignal): void {
    const was = this.phase;
    this.phase = nextPhase(was, signal);
    if (was === "over" || this.phase !== "over") return;
    for (const cancel of this.cancels.splice(0)) cancel();
    this.setJitPolicy(1);
    if (signal === "stopped") return;
    const why = signal === "quiet" ? "synced" : was === "listed" ? "never quiet after the sync" : "not ready in time";
    const fields = { why, afterMs: this.now() - this.began, trims: this.trims };
    this.logger.debug("start-up over: the JIT's normal policy again", fields);
  }
}

/** Bun's JIT policy for this thread's VM, where Bun has it (1.4.5 on). */
function bunJitPolicy(scale: number): void {
  const unsafe = Bun.unsafe as { setJITPolicy?: (scale: number) => void };
  unsafe.setJITPolicy?.(scale);
}
