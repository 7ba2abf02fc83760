// The lean start-up: an operator's first sync (every object that exists handled once: its children
// written, its status) is its memory's peak, the figure a pod's memory limit must hold after every
// restart, and the code it runs per object runs once per object. Through it the JIT is held back
// (Bun.unsafe.setJITPolicy: its tier-up thresholds × LEAN_JIT_POLICY), so the sync is interpreted
// instead of compiled for, and the runtime's code pages it runs are handed back every TRIM_EVERY_MS
// while it is busy (runtime/code-pages.ts; its first seconds page in ~35 MB of the executable, its
// later ones need a third of that). 2,000 reconciled parents peaked at 54.5 MB instead of 92.2, for
// 3.5 ms of CPU per parent instead of 1.9 (each half alone: 70.5 and 82.8 MB; docs/performance.md,
// "The lean start-up"): kobun's CPU goes mostly to native code (fetch, TLS, JSON), compiled or not.
// It ends at the first quiet after every watch has listed (the sync is done) or after AT_MOST_MS,
// whatever happens: then the normal JIT policy, and code-pages.ts's trims once quiet.

import type { Logger } from "../util/index.ts";
import { unrefTimeout, type Activity } from "./code-pages.ts";

/** How many times the JIT's tier-up thresholds are multiplied through the sync. */
export const LEAN_JIT_POLICY = 10_000;
/** How often the sync's code pages are handed back while it is busy. */
export const TRIM_EVERY_MS = 500;
/** The longest a start-up stays lean (a cluster so busy that the operator never goes quiet). */
export const AT_MOST_MS = 300_000;

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

/** How the lean start-up sets the JIT's policy, trims, and keeps time (tests give their own). */
export interface LeanHooks {
  setJitPolicy?: (scale: number) => void;
  every?: (run: () => void, ms: number) => () => void;
  later?: (run: () => void, ms: number) => () => void;
  now?: () => number;
}

export class LeanStartup {
  private phase: LeanPhase = "lean";
  private readonly setJitPolicy: (scale: number) => void;
  private readonly now: () => number;
  private readonly began: number;
  private readonly cancels: Array<() => void> = [];
  private lastWakes: number;
  /** Trims asked for while busy (said once, when it is over, not a log line each). */
  private trims = 0;

  /** Begins at once: the JIT reluctant, a trim every TRIM_EVERY_MS that saw activity. */
  constructor(
    private readonly logger: Logger, private readonly activity: Activity, private readonly trimNow: () => void,
    hooks: LeanHooks = {},
  ) {
    this.setJitPolicy = hooks.setJitPolicy ?? bunJitPolicy;
    this.now = hooks.now ?? Date.now;
    this.began = this.now();
    this.lastWakes = activity.wakes();
    this.setJitPolicy(LEAN_JIT_POLICY);
    this.cancels.push((hooks.every ?? unrefInterval)(() => this.tick(), TRIM_EVERY_MS));
    this.cancels.push((hooks.later ?? unrefTimeout)(() => this.signal("expired"), AT_MOST_MS));
  }

  get current(): LeanPhase {
    return this.phase;
  }

  /** Every watch has listed: the sync is under way, and over at the next quiet. */
  listed(): void {
    this.signal("listed");
  }

  /** The process went quiet (the heap pacer fell asleep). */
  quiet(): void {
    this.signal("quiet");
  }

  /** The operator stops: the policy back, no timer left behind. */
  stop(): void {
    this.signal("stopped");
  }

  /** A trim if anything ran since the last look: a quiet spell's pages are already out. */
  private tick(): void {
    const wakes = this.activity.wakes();
    const active = !this.activity.quiet() || wakes !== this.lastWakes;
    this.lastWakes = wakes;
    if (!active) return; // once over, its interval is cancelled: no tick comes
    this.trims++;
    this.trimNow();
  }

  private signal(signal: LeanSignal): void {
    const was = this.phase;
    this.phase = nextPhase(was, signal);
    if (was === "over" || this.phase !== "over") return;
    for (const cancel of this.cancels.splice(0)) cancel();
    this.setJitPolicy(1);
    if (signal === "stopped") return;
    const why = signal === "quiet" ? "synced" : "took too long";
    const fields = { why, afterMs: this.now() - this.began, trims: this.trims };
    this.logger.debug("start-up over: the JIT's normal policy again", fields);
  }
}

/** Bun's JIT policy for this thread's VM, where Bun has it (1.4.5 on). */
function bunJitPolicy(scale: number): void {
  const unsafe = Bun.unsafe as { setJITPolicy?: (scale: number) => void };
  unsafe.setJITPolicy?.(scale);
}

function unrefInterval(run: () => void, ms: number): () => void {
  const timer = setInterval(run, ms);
  timer.unref(); // the lean start-up never keeps a process alive
  return () => clearInterval(timer);
}
