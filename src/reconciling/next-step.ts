// What a cycle asks for after its write, as life.ts's `written` outcome takes it: the finalizer
// first, a re-check of what others changed meanwhile, a delay, or nothing.

import type { CyclePlan } from "../handling/index.ts";
import { essenceOf } from "../handling/index.ts";
import { deepEqual } from "../declaring/index.ts";
import type { KubeObject } from "../kube/index.ts";
import type { Outcome } from "./life.ts";

/** What the cycle asks for next: the finalizer first, a re-check of others' change, a delay, or nothing. */
export function nextOf(
  plan: CyclePlan, body: KubeObject, newest: KubeObject,
): "done" | "finalizer-first" | "changed" | "delayed" {
  if (plan.finalizerFirst) return "finalizer-first";
  // Someone changed the object between our read and our write. The watch events of that
  // change are older than our write and will be skipped as stale, so look again now.
  if (newest !== body && changedMeanwhile(body, newest, plan)) return "changed";
  return plan.delay !== undefined ? "delayed" : "done";
}

/** The `written` outcome of a cycle, with `answer` and `delay` only when they have a value. */
export function writtenOutcome(
  body: KubeObject, answer: KubeObject | undefined, wrote: boolean, next: Written["next"], delay: number | undefined,
): Written {
  const outcome: Written = { kind: "written", body, wrote, next };
  if (answer) outcome.answer = answer;
  if (delay !== undefined) outcome.delay = delay;
  return outcome;
}

type Written = Extract<Outcome, { kind: "written" }>;

function changedMeanwhile(before: KubeObject, after: KubeObject, plan: CyclePlan): boolean {
  if (Boolean(after.metadata.deletionTimestamp) !== Boolean(before.metadata.deletionTimestamp)) return true;
  return plan.essence !== undefined && !deepEqual(essenceOf(after), plan.essence);
}
