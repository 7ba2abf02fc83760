// One processing cycle of one object: which cause (create / update / delete / resume /
// noop / free), which handlers apply, run those that are due, and plan ONE set of changes
// (handler results, the `patch` the handlers filled, progress, diff base; the finalizer is
// reconciling/finalizer.ts's, which tells the cycle only its `FinalizerTerms`).
// The cause and the handlers are selection.ts's; this file runs those that are due and plans.
// Must never send anything (patching.ts does) nor wait for delays (the worker does).

import type { KubeObject } from "../kube/index.ts";
import { clock } from "../util/index.ts";
import { deepEqual } from "../declaring/index.ts";
import type { HandlerSpec } from "../declaring/index.ts";
import type { Cause, HandlerContext, ObjectContext } from "../declaring/index.ts";
import { compactPatch, newPatch, objectContext } from "./context.ts";
import type { CycleEnv } from "./cycle-env.ts";
import { redact, storedBase } from "./diffbase.ts";
import { applyToEssence, type Essence } from "./essence.ts";
import { readBookkeeping, type Bookkeeping, type BookkeepingChange, type ProgressRecord } from "./progress.ts";
import { anyDue, runDue } from "./due.ts";
import { subhandlerOutsideCall } from "./subhandlers.ts";
import type { RunOutcome } from "./runner.ts";
import {
  contextFor, handlerFiltersPass, inScope, recordFor, seeCause, selectHandlers, type ContextMaker, type Selected,
  type Sight,
} from "./selection.ts";

// Declared in cycle-env.ts and cycle-plan.ts (selection.ts and due.ts read them too); named here,
// where callers look for them.
export type { CycleEnv } from "./cycle-env.ts";
export type { CyclePlan, FinalizerTerms, HandlerRun, ObjectState } from "./cycle-plan.ts";
import type { CyclePlan, FinalizerTerms, ObjectState } from "./cycle-plan.ts";

/** Runs one cycle of `body` and plans its writes, on the `terms` of kobun's finalizer. */
export async function runCycle(
  env: CycleEnv, state: ObjectState, body: KubeObject, signal: AbortSignal, terms: FinalizerTerms,
): Promise<CyclePlan> {
  if (state.resume === "unseen") state.resume = env.hasResume ? "due" : "done";
  const plan: CyclePlan = {
    cause: "noop", user: undefined, results: {}, bookkeeping: { progress: new Map() },
    finalizer: undefined, finalizerFirst: false, delay: undefined, runs: [], essence: undefined, done: false,
  };
  // Only daemons or timers: the finalizer they hold is all there is to write.
  // The plan is returned as it is filled in (no copies): a cycle runs per object and per change.
  if (env.handlers.length === 0) {
    plan.done = true;
    return plan;
  }
  const book = readBookkeeping(body, env.ids);
  const sight = seeCause(env, body, book, state.resume === "due", terms.cleanup);
  // Resume is never mixed into a create or a deletion.
  if (sight.cause !== "resume" && sight.cause !== "update") state.resume = "done";
  if (sight.cause === "free") {
    plan.cause = "free";
    return plan;
  }
  plan.essence = sight.essence;
  if (sight.cause === "noop") return plan;
  const patch = newPatch(() => body);
  // What ctx.api's writes to this very object changed: into the new base, never sent again.
  const written: Record<string, any> = {};
  const seen = sight as Sight & { cause: Cause };
  // The base and the handlers' contexts are made when first needed (none in a finalizer-first cycle).
  let base: ObjectContext | undefined;
  const at = clock().now();
  const contextOf: ContextMaker = (spec, record) => {
    base ??= objectContext(
      body, env.resource, state.memo, env.logger, signal, env.tools, written,
      (after) => (plan.newest = after.metadata.resourceVersion),
    );
    return contextFor(env, seen, body, base, patch, spec, record, at);
  };
  const selected = selectHandlers(env, seen, body, book, contextOf, state.resume === "due", signal);
  if (!inScope(env, seen, body, book, selected, contextOf, signal)) return plan; // Kopf's stealth mode: a noop
  plan.cause = seen.cause;
  if (terms.holdFirst && anyDue(selected, sight.now)) {
    // Kopf's order: hold the object with the finalizer before any handler can have side effects,
    // so that a deletion racing the first handlers still runs the delete handlers.
    plan.finalizerFirst = true;
    return plan;
  }
  if (env.logger.enabled("debug")) logInProgress(env, body, seen.cause);
  const records = new Map<string, ProgressRecord>();
  const due = { env, state, body, plan, book, contextOf, cause: seen.cause, now: sight.now, signal, written: records };
  const { allDone, earliest } = await runDue(due, selected);
  plan.user = compactPatch(patch);
  if (allDone) {
    completeCause(env, sight, book, selected, records, written, plan);
    plan.done = true;
    state.resume = "done";
  } else for (const [id, record] of records) plan.bookkeeping.progress.set(id, record);
  plan.delay = earliest === undefined ? undefined : Math.max(0, earliest - clock().now());
  return plan;
}

/**
 * The cause is complete: clean up progress in the same patch (failures stay visible), store the
 * new base or release. The base is what the handlers saw, with what their own writes through
 * ctx.api changed (`own`), then their `patch`, which is sent after those writes.
 */
function completeCause(
  env: CycleEnv, sight: Sight, book: Bookkeeping, selected: Selected[], records: Map<string, ProgressRecord>,
  own: Record<string, any>, plan: CyclePlan,
): void {
  for (const id of book.progress.keys()) plan.bookkeeping.progress.set(id, null);
  // A failure stays visible: the handler's, and those of the sub-handlers that made it fail.
  const keep = (id: string, last: ProgressRecord | undefined): void => {
    if (!last?.failure) return;
    plan.bookkeeping.progress.set(id, { ...last, final: true });
    for (const child of last.subhandlers ?? []) keep(child, records.get(child) ?? recordFor(book, child, last.purpose));
  };
  const tally = { succeeded: 0, failed: 0 };
  for (const { spec, record } of selected) {
    const last = records.get(spec.id) ?? record;
    keep(spec.id, last);
    if (last?.failure) tally.failed++;
    else tally.succeeded++;
  }
  if (selected.length > 0) plan.tally = tally; // no handler for the cause: no summary line (Kopf logs none)
  if (sight.cause === "delete") return; // the finalizer's release is reconciling/finalizer.ts's
  const seen = Object.keys(own).length ? applyToEssence(sight.essence!, own) : sight.essence!;
  const newBase = plan.user ? applyToEssence(seen, plan.user) : seen;
  plan.essence = newBase;
  const stored = storedBase(redact(newBase, env.diffBase.sensitive, sight.salt), env.diffBase, sight.salt);
  if (!deepEqual(stored.base, book.base)) plan.bookkeeping.base = stored.text;
}

/** How Kopf's log lines name a cause ("Creation is in progress.", "Updating is processed: …"). */
export function causeTitle(cause: Cause): string {
  return CAUSE_TITLES[cause];
}

const CAUSE_TITLES: Record<Cause, string> = {
  create: "Creation", update: "Updating", delete: "Deletion", resume: "Resuming",
};

/** Kopf's line at every cycle of a cause (its e2e looks for it): the version, never the body Kopf prints. */
function logInProgress(env: CycleEnv, body: KubeObject, cause: Cause): void {
  const { namespace, name, resourceVersion } = body.metadata;
  env.logger.debug(`${causeTitle(cause)} is in progress: resourceVersion ${resourceVersion}.`, { namespace, name });
}

/** Whether a delete handler that waits for the deletion (not optional) applies to the object. */
export function deleteHandlerApplies(
  env: CycleEnv, state: ObjectState, body: KubeObject, signal: AbortSignal,
): boolean {
  let base: ObjectContext | undefined;
  for (const spec of env.handlers) {
    if (spec.kind !== "delete" || spec.options.optional) continue;
    const make = (): HandlerContext => {
      base ??= objectContext(body, env.resource, state.memo, env.logger, signal);
      return {
        ...base, patch: newPatch(() => body), diff: [], old: undefined, new: undefined, reason: "delete", retry: 0,
        started: new Date(clock().now()), runtime: 0, diffUnavailable: false, subhandler: subhandlerOutsideCall,
      } as HandlerContext;
    };
    if (handlerFiltersPass(spec, body, make, signal)) return true;
  }
  return false;
}
