// One processing cycle of one object: which cause (create / update / delete / resume /
// noop / free), which handlers apply, run those that are due, and plan ONE set of changes
// (handler results, the `patch` the handlers filled, progress, diff base, finalizer).
// Cause detection follows Kopf: no diff base → create; deletionTimestamp with our finalizer
// → delete; a non-empty diff → update; first sight after start with resume handlers →
// resume (mixed into an update, never into a create or delete); otherwise nothing.
// Must never send anything (patching.ts does) nor wait for delays (the worker does).

import type { KubeObject, Resource } from "../kube/types.ts";
import type { Logger } from "../util/log.ts";
import { compactPatch, newPatch, objectContext } from "./context.ts";
import { diffFromBase, redact, storedBase, withoutDigests, type DiffBasePolicy } from "./diffbase.ts";
import { applyToEssence, diffOf, essenceOf, type Essence } from "./essence.ts";
import { deepEqual, getField, matchMeta, matchValue } from "./filters.ts";
import { FINALIZER, readBookkeeping, type BookkeepingChange, type ProgressRecord } from "./progress.ts";
import type { HandlerSpec } from "./registry.ts";
import { runHandler, type HandlingDefaults, type RunOutcome } from "./runner.ts";
import type { Cause, Diff, HandlerContext, ObjectContext } from "./types.ts";

export interface CycleEnv {
  resource: Resource;
  /** The changing handlers of the resource (not on.event), in registration order. */
  handlers: HandlerSpec[];
  /** Their ids, to find their progress records. */
  ids: string[];
  hasResume: boolean;
  defaults: HandlingDefaults;
  /** What of the essence is stored as the diff base, and how much of it. */
  diffBase: DiffBasePolicy;
  logger: Logger;
}

/** What kobun remembers of an object in memory while it runs (never needed for correctness after a restart). */
export interface ObjectState {
  memo: Record<string, any>;
  /** Seen since this operator started: resume handlers run on the first sight only. */
  seen: boolean;
  /** The handler running now, as "<id> on <namespace>/<name>": named if shutdown abandons it. */
  running?: string;
}

export interface HandlerRun {
  spec: HandlerSpec;
  outcome: RunOutcome;
  retry: number;
}

export interface CyclePlan {
  cause: Cause | "noop" | "free";
  /** The merge-patch the handlers wrote into `patch` (may hold status). */
  user: Record<string, any> | undefined;
  /** Handler results by id, for `status.<id>`. */
  results: Record<string, unknown>;
  bookkeeping: BookkeepingChange;
  finalizer: "add" | "remove" | undefined;
  /** Add the finalizer alone and run the cycle again before any handler has side effects. */
  finalizerFirst: boolean;
  /** ms until the earliest delayed handler is due. */
  delay: number | undefined;
  runs: HandlerRun[];
  /** The essence the handlers saw (with their own patch applied); undefined when deleting. */
  essence: Essence | undefined;
}

/** What to do about kobun's finalizer this cycle: decided by the caller (reconciling/finalizer.ts's table). */
export type FinalizerAction = "add" | "run-delete-handlers" | "release" | "nothing";

/**
 * Runs one cycle of `body` and plans its writes. `finalizer`: the table's action for the object
 * (`needsFinalizer` tells the table whether a delete handler applies).
 */
export async function runCycle(env: CycleEnv, state: ObjectState, body: KubeObject, signal: AbortSignal, finalizer: FinalizerAction): Promise<CyclePlan> {
  const meta = body.metadata;
  const initial = !state.seen;
  state.seen = true;
  const plan: CyclePlan = {
    cause: "noop", user: undefined, results: {}, bookkeeping: { progress: new Map() },
    finalizer: undefined, finalizerFirst: false, delay: undefined, runs: [], essence: undefined,
  };
  if (env.handlers.length === 0) return plan;
  const deleting = Boolean(meta.deletionTimestamp);
  const change = finalizer === "add" ? "add" : finalizer === "release" ? "remove" : undefined;
  const book = readBookkeeping(body, env.ids);
  const base = objectContext(body, env.resource, state.memo, env.logger, signal);
  const purposeOf = (spec: HandlerSpec, cause: Cause): Cause => (spec.kind === "resume" ? "resume" : cause);
  const recordOf = (spec: HandlerSpec, cause: Cause): ProgressRecord | undefined => {
    const record = book.progress.get(spec.id);
    return record && record.purpose === purposeOf(spec, cause) && !record.final ? record : undefined;
  };
  const pendingResume = () => env.handlers.some((s) => s.kind === "resume" && isPending(recordOf(s, "resume")));

  let cause: Cause;
  let newE: Essence | undefined;
  // The essence as it is compared with the stored base: sensitive values replaced by digests.
  let redacted: Essence | undefined;
  const salt = meta.uid ?? "";
  let diff: Diff = [];
  let diffUnavailable = false;
  if (deleting) {
    if (finalizer !== "run-delete-handlers") return { ...plan, cause: "free" };
    cause = "delete";
  } else {
    newE = essenceOf(body);
    plan.essence = newE;
    redacted = redact(newE, env.diffBase.sensitive, salt);
    if (book.base === undefined) cause = "create";
    else {
      ({ diff, unavailable: diffUnavailable } = diffFromBase(book.base, redacted, salt));
      if (diff.length) cause = "update";
      else if ((initial && env.hasResume) || pendingResume()) cause = "resume";
      else return { ...plan, finalizer: change };
    }
  }
  plan.cause = cause;
  // A digest-only base tells that something changed, not what was there before.
  const oldE = typeof book.base === "object" ? book.base : undefined;
  const patch = newPatch();
  const now = Date.now();
  const contextFor = (spec: HandlerSpec, record: ProgressRecord | undefined): HandlerContext => {
    const started = record ? new Date(record.started) : new Date(now);
    const ctx: HandlerContext = {
      ...base, patch, diff, old: oldE, new: newE, reason: cause, diffUnavailable,
      retry: record?.retries ?? 0, started, runtime: Date.now() - started.getTime(),
      logger: env.logger.child({ namespace: meta.namespace, name: meta.name, handler: spec.id }),
    };
    if (spec.field) {
      const path = spec.field;
      ctx.old = getField(oldE, path);
      ctx.new = getField(newE, path);
      ctx.diff = withoutDigests(diffOf(ctx.old, getField(redacted, path)));
    }
    return ctx;
  };

  // Select the handlers of this cause whose filters match.
  const selected: { spec: HandlerSpec; ctx: HandlerContext; record: ProgressRecord | undefined }[] = [];
  for (const spec of env.handlers) {
    let wanted: boolean;
    if (spec.kind === "field") wanted = cause === "create" || cause === "update";
    else if (spec.kind === "resume") wanted = cause === "resume" || (cause === "update" && (initial || isPending(recordOf(spec, cause))));
    else wanted = spec.kind === cause;
    if (!wanted || !metaMatches(spec, body)) continue;
    const record = recordOf(spec, cause);
    const ctx = contextFor(spec, record);
    if (spec.field && !fieldMatches(spec, ctx)) continue;
    if (spec.options.when && !spec.options.when(ctx)) continue;
    if (selected.some((s) => s.spec.id === spec.id)) continue; // one id runs once per cycle
    selected.push({ spec, ctx, record });
  }

  if (!deleting) plan.finalizer = change;
  const due = selected.filter(({ record }) => isPending(record) && !(record?.delayed && Date.parse(record.delayed) > now));
  if (plan.finalizer === "add" && due.length > 0) {
    // Kopf's order: hold the object with the finalizer before any handler can have side effects,
    // so that a deletion racing the first handlers still runs the delete handlers.
    plan.finalizerFirst = true;
    return plan;
  }

  const written = new Map<string, ProgressRecord>();
  let allDone = true;
  let earliest: number | undefined;
  for (const { spec, ctx, record } of selected) {
    if (!isPending(record)) continue;
    if (record?.delayed) {
      const at = Date.parse(record.delayed);
      if (at > now) {
        allDone = false;
        earliest = Math.min(earliest ?? Infinity, at);
        continue;
      }
    }
    if (signal.aborted) {
      allDone = false;
      break;
    }
    state.running = `${spec.id} on ${meta.namespace ? `${meta.namespace}/` : ""}${meta.name}`;
    const outcome = await runHandler(spec, ctx, env.defaults, signal).finally(() => (state.running = undefined));
    plan.runs.push({ spec, outcome, retry: ctx.retry });
    const next: ProgressRecord = { purpose: purposeOf(spec, cause), started: ctx.started.toISOString(), retries: ctx.retry };
    if (outcome.kind === "success") {
      if (outcome.result !== undefined) plan.results[spec.id] = outcome.result;
      next.success = true;
    } else if (outcome.kind === "retry") {
      const at = Date.now() + outcome.delay * 1000;
      next.retries = ctx.retry + 1;
      next.delayed = new Date(at).toISOString();
      next.message = outcome.error.message;
      earliest = Math.min(earliest ?? Infinity, at);
      allDone = false;
    } else if (outcome.kind === "failure") {
      next.failure = true;
      next.message = outcome.error.message;
    } else {
      allDone = false;
      continue;
    }
    written.set(spec.id, next);
  }

  plan.user = compactPatch(patch);
  if (allDone) {
    // The cause is complete: clean up progress in the same patch; keep failures visible.
    for (const id of book.progress.keys()) plan.bookkeeping.progress.set(id, null);
    for (const { spec, record } of selected) {
      const last = written.get(spec.id) ?? record;
      if (last?.failure) plan.bookkeeping.progress.set(spec.id, { ...last, final: true });
    }
    if (cause === "delete") plan.finalizer = "remove";
    else {
      const newBase = plan.user ? applyToEssence(newE!, plan.user) : newE!;
      plan.essence = newBase;
      const stored = storedBase(redact(newBase, env.diffBase.sensitive, salt), env.diffBase, salt);
      if (!deepEqual(stored.base, book.base)) plan.bookkeeping.base = stored.text;
    }
  } else {
    for (const [id, record] of written) plan.bookkeeping.progress.set(id, record);
  }
  plan.delay = earliest === undefined ? undefined : Math.max(0, earliest - Date.now());
  return plan;
}

function isPending(record: ProgressRecord | undefined): boolean {
  return !record?.success && !record?.failure;
}

function metaMatches(spec: HandlerSpec, body: KubeObject): boolean {
  return matchMeta(spec.options.labels, body.metadata.labels) && matchMeta(spec.options.annotations, body.metadata.annotations);
}

function fieldMatches(spec: HandlerSpec, ctx: HandlerContext): boolean {
  if (ctx.diff.length === 0) return false; // compared as stored: a sensitive field by its digest
  const o = spec.options;
  return matchValue(o.value, ctx.new) && matchValue(o.old, ctx.old) && matchValue(o.new, ctx.new);
}

/** Whether kobun's finalizer is needed: while a non-optional delete handler applies. */
export function needsFinalizer(env: CycleEnv, state: ObjectState, body: KubeObject, signal: AbortSignal): boolean {
  let base: ObjectContext | undefined;
  for (const spec of env.handlers) {
    if (spec.kind !== "delete" || spec.options.optional || !metaMatches(spec, body)) continue;
    if (spec.options.when) {
      base ??= objectContext(body, env.resource, state.memo, env.logger, signal);
      const ctx = { ...base, patch: newPatch(), diff: [], old: undefined, new: undefined, reason: "delete", retry: 0, started: new Date(), runtime: 0, diffUnavailable: false } as HandlerContext;
      if (!spec.options.when(ctx)) continue;
    }
    return true;
  }
  return false;
}

/** Whether the object carries kobun's finalizer. */
export function hasFinalizer(body: KubeObject): boolean {
  return body.metadata.finalizers?.includes(FINALIZER) ?? false;
}
