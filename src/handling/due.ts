// Runs the handlers of a cycle that are due, in order, then the sub-handlers each one registered
// (subhandlers.ts), and records the progress each leaves. Split from cycle.ts, which selects the
// handlers before and plans the writes after.
// A parent that registered sub-handlers is settled only when all of them are: it succeeds if they
// all did, fails for good if one did; until then its record waits (its own retries not counted) and
// it is called again, to register them again, when the earliest is due; finished ones never run again.
// Must never write anything nor wait for a delay: it fills the cycle's plan and progress map.

import type { KubeObject } from "../kube/index.ts";
import { clock, inSpan, tracing } from "../util/index.ts";
import { PermanentError } from "../declaring/index.ts";
import type { Cause, HandlerContext, HandlerSpec } from "../declaring/index.ts";
import type { CycleEnv } from "./cycle-env.ts";
import type { CyclePlan, ObjectState } from "./cycle-plan.ts";
import type { Bookkeeping, ProgressRecord } from "./progress.ts";
import { runHandler, type HandlingDefaults, type RunOutcome } from "./runner.ts";
import { isPending, purposeOf, recordOf, type ContextMaker, type Selected } from "./selection.ts";
import { openRegistrations } from "./subhandlers.ts";

/** What running the due handlers of one cycle needs, and where it leaves what they did. */
export interface DueScope {
  env: CycleEnv;
  state: ObjectState;
  body: KubeObject;
  plan: CyclePlan;
  book: Bookkeeping;
  contextOf: ContextMaker;
  cause: Cause;
  now: number;
  signal: AbortSignal;
  /** The progress records the cycle leaves (handlers' and sub-handlers'), by id. */
  written: Map<string, ProgressRecord>;
}

/** How a list of handlers stands after the cycle: all settled or not, the earliest due, those failed for good. */
export interface DueResult {
  allDone: boolean;
  earliest: number | undefined;
  failed: string[];
}

/** Runs the handlers of `list` that are due, in order. */
export async function runDue(scope: DueScope, list: readonly Selected[]): Promise<DueResult> {
  const result: DueResult = { allDone: true, earliest: undefined, failed: [] };
  for (const { spec, ctx, record } of list) {
    if (!isPending(record)) {
      if (record?.failure) result.failed.push(spec.id);
      continue;
    }
    if (!isDue(record, scope.now)) {
      result.allDone = false;
      result.earliest = Math.min(result.earliest ?? Infinity, Date.parse(record!.delayed!));
      continue;
    }
    if (scope.signal.aborted) {
      result.allDone = false;
      break;
    }
    const next = await runOne(scope, spec, ctx ?? scope.contextOf(spec, record), record);
    if (next?.failure) result.failed.push(spec.id);
    else if (!next?.success) {
      result.allDone = false;
      if (next?.delayed) result.earliest = Math.min(result.earliest ?? Infinity, Date.parse(next.delayed));
    }
  }
  return result;
}

/** Runs one handler, then its sub-handlers; the record it leaves (none when shutdown stopped it: nothing to record). */
async function runOne(
  scope: DueScope, spec: HandlerSpec, ctx: HandlerContext, record: ProgressRecord | undefined,
): Promise<ProgressRecord | undefined> {
  const { env, plan, state, body } = scope;
  const meta = body.metadata;
  const registrations = openRegistrations(spec, ctx, env.ids);
  state.running = `${spec.id} on ${meta.namespace ? `${meta.namespace}/` : ""}${meta.name}`;
  const began = performance.now();
  let outcome = await (tracing()
    ? tracedRun(spec, ctx, env.defaults, scope.signal, plan.cause)
    : runHandler(spec, ctx, env.defaults, scope.signal)
  ).finally(() => (state.running = undefined));
  registrations.close();
  const seconds = (performance.now() - began) / 1000;
  if (outcome.kind === "aborted") return undefined;
  const next: ProgressRecord = {
    purpose: purposeOf(spec, scope.cause), started: ctx.started.toISOString(), retries: ctx.retry,
  };
  // Kept whatever this call did: the sub-handlers' records stay findable (and are cleaned up with the cause).
  if (record?.subhandlers) next.subhandlers = record.subhandlers;
  if (outcome.kind === "success" && registrations.specs.length) {
    const children = await runChildren(scope, registrations.specs, next);
    if (!children.allDone) {
      // Waiting: called again when the earliest sub-handler is due; not a retry of its own.
      if (children.earliest !== undefined) next.delayed = new Date(children.earliest).toISOString();
      scope.written.set(spec.id, next);
      if (env.logger.enabled("debug")) {
        const fields = { namespace: meta.namespace, name: meta.name, handler: spec.id, until: next.delayed };
        env.logger.debug(`Handler '${spec.id}' has unfinished sub-handlers; it runs again when one is due.`, fields);
      }
      return next;
    }
    if (children.failed.length) {
      outcome = { kind: "failure", error: new PermanentError(`sub-handler(s) failed: ${children.failed.join(", ")}`) };
    }
  }
  plan.runs.push({ spec, outcome, retry: ctx.retry, seconds });
  if (outcome.kind === "success") {
    if (outcome.result !== undefined) plan.results[spec.id] = outcome.result;
    next.success = true;
  } else if (outcome.kind === "retry") {
    next.retries = ctx.retry + 1;
    next.delayed = new Date(clock().now() + outcome.delay * 1000).toISOString();
    next.message = outcome.error.message;
  } else {
    next.failure = true;
    next.message = outcome.error.message;
  }
  scope.written.set(spec.id, next);
  return next;
}

/**
 * Runs the sub-handlers a call registered that are due; `next` (the parent's record) names every
 * one registered in this cause so far, so that their records are found again (progress.ts).
 */
function runChildren(scope: DueScope, specs: HandlerSpec[], next: ProgressRecord): Promise<DueResult> {
  const ids = new Set(next.subhandlers);
  for (const s of specs) ids.add(s.id);
  next.subhandlers = [...ids];
  const list = specs.map((spec): Selected => ({
    spec, ctx: undefined, record: recordOf(scope.book, spec, scope.cause),
  }));
  return runDue(scope, list);
}

/** One handler run in a span of its own, the child of the cycle's (tracing on). */
function tracedRun(
  spec: HandlerSpec, ctx: HandlerContext, defaults: HandlingDefaults, signal: AbortSignal, cause: CyclePlan["cause"],
): Promise<RunOutcome> {
  const attributes = { "kobun.handler": spec.id, "kobun.cause": cause, "kobun.retry": ctx.retry };
  return inSpan(`handler ${spec.id}`, attributes, false, async (span) => {
    const outcome = await runHandler(spec, ctx, defaults, signal);
    span?.setAttributes({ "kobun.outcome": outcome.kind });
    if (outcome.kind === "failure" || outcome.kind === "retry") span?.fail();
    return outcome;
  });
}

/** Whether any selected handler is due now (a loop, not Array.prototype.some: see selection.ts). */
export function anyDue(selected: readonly Selected[], now: number): boolean {
  for (const { record } of selected) if (isDue(record, now)) return true;
  return false;
}

/** Pending and not delayed into the future. */
function isDue(record: ProgressRecord | undefined, now: number): boolean {
  return isPending(record) && !(record?.delayed && Date.parse(record.delayed) > now);
}
