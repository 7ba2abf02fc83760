// The finalizer decision, as one table (like kube-rs's FinalizerState): kobun's finalizer is
// held only while a (non-optional) delete handler applies to the object, so that a deletion
// waits for those handlers and for nothing else.
//
//   deleting? │ has ours? │ needs one? │ action
//   ──────────┼───────────┼────────────┼──────────────────────────────────────────────
//   no        │ no        │ yes        │ add (alone, before any handler: Kopf's order)
//   no        │ yes       │ no         │ release (a delete handler stopped matching)
//   no        │ any       │ as it has  │ nothing
//   yes       │ yes       │ any        │ run the delete handlers, then release
//   yes       │ no        │ any        │ nothing (not ours to hold: the object is free to go)

import type { FinalizerAction } from "../handling/cycle.ts";

export function finalizerAction(deleting: boolean, has: boolean, needs: () => boolean): FinalizerAction {
  if (deleting) return has ? "run-delete-handlers" : "nothing";
  const needed = needs();
  return needed && !has ? "add" : !needed && has ? "release" : "nothing";
}
