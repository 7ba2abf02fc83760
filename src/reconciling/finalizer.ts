// kobun's finalizer, decided and acted on here (as kube-rs's finalizer.rs): the table below says
// what to do; the cycle is told only what it must know (FinalizerTerms: is a deletion ours to
// handle, must the finalizer be written before any handler), and the change to the finalizer
// goes into the plan here (patching.ts writes it). The finalizer is held only while something
// must see the deletion: a (non-optional) delete handler that applies, or a daemon or timer that
// holds it, so a deletion waits for those and for nothing else.
//
//   deleting? │ has ours? │ needs one? │ action
//   ──────────┼───────────┼────────────┼──────────────────────────────────────────────
//   no        │ no        │ yes        │ add (alone, before any handler: Kopf's order)
//   no        │ yes       │ no         │ release (a delete handler stopped matching)
//   no        │ any       │ as it has  │ nothing
//   yes       │ yes       │ any        │ run the delete handlers, then release
//   yes       │ no        │ any        │ nothing (not ours to hold: the object is free to go)

import type { KubeObject } from "../kube/index.ts";
import {
  deleteHandlerApplies, runCycle, type CycleEnv, type CyclePlan, type FinalizerTerms, type ObjectState,
} from "../handling/index.ts";
import { FINALIZER } from "../declaring/index.ts";
import type { Background } from "./daemons/background.ts";

/** What to do about kobun's finalizer this cycle (the table's last column). */
export type FinalizerAction = "add" | "run-delete-handlers" | "release" | "nothing";

export function finalizerAction(deleting: boolean, has: boolean, needs: () => boolean): FinalizerAction {
  if (deleting) return has ? "run-delete-handlers" : "nothing";
  const needed = needs();
  return needed && !has ? "add" : !needed && has ? "release" : "nothing";
}

/** Whether the object carries kobun's finalizer. */
export function hasFinalizer(body: KubeObject): boolean {
  return body.metadata.finalizers?.includes(FINALIZER) ?? false;
}

/** What the cycle is told for each action: made once, not per cycle. */
const TERMS: Record<FinalizerAction, FinalizerTerms> = {
  add: { cleanup: false, holdFirst: true },
  "run-delete-handlers": { cleanup: true, holdFirst: false },
  release: { cleanup: false, holdFirst: false },
  nothing: { cleanup: false, holdFirst: false },
};

/**
 * One cycle of `body` with kobun's finalizer around it: decide by the table, run the cycle on the
 * action's terms, then plan the finalizer's change: add it, release it (no longer needed, or the
 * delete handlers all finished), or leave it. `background`: whether a daemon or timer holds it.
 */
export async function cycleWithFinalizer(
  env: CycleEnv, state: ObjectState, body: KubeObject, signal: AbortSignal, background: Pick<Background, "holds">,
): Promise<CyclePlan> {
  const needs = () => deleteHandlerApplies(env, state, body, signal) || background.holds(body);
  const action = finalizerAction(Boolean(body.metadata.deletionTimestamp), hasFinalizer(body), needs);
  const plan = await runCycle(env, state, body, signal, TERMS[action]);
  const released = action === "release" || (action === "run-delete-handlers" && plan.done === true);
  plan.finalizer = action === "add" ? "add" : released ? "remove" : undefined;
  return plan;
}
