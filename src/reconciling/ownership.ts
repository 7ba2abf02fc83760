// Ownership is exclusive (DESIGN, behaviour 4): whatever takes an object away from this replica (a freeze
// by a peer, `kobun freeze`, a lost lease) aborts the handlers running on it at once and waits
// for them, bounded by a grace period, so that two replicas are never inside the same object's
// handlers at once. Whatever a cycle produced after it lost its object is discarded: another
// replica may own the object now, and the relist on resume brings it back here if not.
//
// A handler that ignores its signal cannot be killed (a promise has no owner to stop it): past
// the grace it is abandoned, named by the caller, and its results are never written.

import type { CycleEnv, HandlerTools } from "../handling/index.ts";
import { eitherSignal, onAbort } from "../util/index.ts";

/** What takes a cycle's object away: its namespace's freeze gate, its shard's handover, either, or none. */
export function freezeOf(gate: AbortSignal | undefined, shard: AbortSignal | undefined): AbortSignal | undefined {
  // One signal per (gate, shard generation), not an AbortSignal.any per cycle (Bun keeps those).
  return gate && shard ? eitherSignal(gate, shard) : (gate ?? shard);
}

/** What handlers are lent under each freeze signal: one per (tools, freeze) pair, not one per cycle. */
const heldTools = new WeakMap<HandlerTools, WeakMap<AbortSignal, HandlerTools>>();
const heldEnvs = new WeakMap<HandlerTools, WeakMap<CycleEnv, CycleEnv>>();

/**
 * `tools` for a cycle of an object that `freeze` may take away: once it does, the Events its handlers post are
 * dropped, as their results are (nothing more is written for them; at a shutdown they are still sent).
 */
export function toolsHeldBy(tools: HandlerTools, freeze: AbortSignal | undefined): HandlerTools {
  if (!freeze || !tools.poster) return tools;
  let byFreeze = heldTools.get(tools);
  if (!byFreeze) heldTools.set(tools, (byFreeze = new WeakMap()));
  let held = byFreeze.get(freeze);
  if (!held) byFreeze.set(freeze, (held = { ...tools, poster: tools.poster.heldBy(freeze) }));
  return held;
}

/** `env` with its tools held by `freeze` (toolsHeldBy). */
export function heldEnv(env: CycleEnv, freeze: AbortSignal | undefined): CycleEnv {
  const tools = env.tools && toolsHeldBy(env.tools, freeze);
  if (tools === env.tools) return env;
  let byEnv = heldEnvs.get(tools!);
  if (!byEnv) heldEnvs.set(tools!, (byEnv = new WeakMap()));
  let held = byEnv.get(env);
  if (!held) byEnv.set(env, (held = { ...env, tools }));
  return held;
}

/** What `whileOwned` returns when the object was taken away: nothing may be written for this cycle. */
export const LOST: unique symbol = Symbol("lost");

export interface Ownership {
  /** Aborts when the object is taken away from this replica (the running signal of its freeze gate). */
  freeze: AbortSignal;
  /** The worker's own signal (shutdown), which the work's signal follows too. */
  signal: AbortSignal;
  /** How long work may go on after the freeze before it is abandoned, in ms. */
  graceMs: number;
  /** Called once when work is abandoned, so the caller can name the handler and the object. */
  onAbandoned(): void;
}

/**
 * Runs `work` with a signal that aborts at the freeze (or at shutdown). Resolves with its
 * result, or LOST when the freeze came first: once it ended within the grace, or at the end of
 * the grace if it ignored its signal (then `onAbandoned` runs and `work` is left to itself).
 * The signal is the one every cycle under this (shutdown, freeze) pair shares (eitherSignal), no
 * controller per cycle: what handlers get of it is a signal of their own per call (lendSignal).
 */
export function whileOwned<T>(owner: Ownership, work: (signal: AbortSignal) => Promise<T>): Promise<T | typeof LOST> {
  const { freeze } = owner;
  if (freeze.aborted) return Promise.resolve(LOST);
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    const finish = (): boolean => {
      if (settled) return false;
      settled = true;
      if (timer) clearTimeout(timer);
      forgetFreeze();
      return true;
    };
    const forgetFreeze = onAbort(freeze, () => {
      timer = setTimeout(() => {
        if (!finish()) return;
        owner.onAbandoned();
        resolve(LOST);
      }, owner.graceMs);
    });
    // A rejection of `work` after it was abandoned is settled here too, never unhandled.
    work(eitherSignal(owner.signal, freeze)).then(
      (result) => finish() && resolve(freeze.aborted ? LOST : result),
      (error) => finish() && (freeze.aborted ? resolve(LOST) : reject(error)),
    );
  });
}
