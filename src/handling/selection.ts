// Which cause, and which handlers: what a cycle sees before anything runs. Cause detection
// follows Kopf: no diff base → create; deletionTimestamp with our finalizer → delete; a
// non-empty diff → update; resuming (the first sight since start of an object that is neither new
// nor being deleted, until its cycle completes) → resume (mixed into an update, never into a
// create or delete); otherwise nothing. Then the handlers of the cause
// whose filters match, each with its context and its progress record.

import type { KubeObject } from "../kube/index.ts";
import { clock } from "../util/index.ts";
import { filtersPass, getField, matchAny, matchValue, type ContextOf } from "../declaring/index.ts";
import type { HandlerSpec, ObjectFilters } from "../declaring/index.ts";
import type { Cause, Diff, HandlerContext, ObjectContext, Patch } from "../declaring/index.ts";
import { lendSignal } from "./context.ts";
import { diffFromBase, fieldDiff, redact } from "./diffbase.ts";
import { essenceOf, type Essence } from "./essence.ts";
import type { Bookkeeping, ProgressRecord } from "./progress.ts";
import type { CycleEnv } from "./cycle-env.ts";
import { subhandlerOutsideCall } from "./subhandlers.ts";

/** What the cycle sees of the object: its cause and what the handlers are told of the change. */
export interface Sight {
  cause: Cause | "noop" | "free";
  essence: Essence | undefined;
  /** The essence as it is compared with the stored base: sensitive values replaced by digests. */
  redacted: Essence | undefined;
  /** The stored base, when it holds values (a digest-only base tells that something changed, not what). */
  old: Essence | undefined;
  diff: Diff;
  diffUnavailable: boolean;
  salt: string;
  now: number;
}

export interface Selected {
  spec: HandlerSpec;
  /** Made at selection when a filter needs it (a `when`, a field), else by `contextOf` when the handler runs. */
  ctx: HandlerContext | undefined;
  record: ProgressRecord | undefined;
}

/** `cleanup`: a deletion is ours to handle (we hold the object); else a deleting object is free to go. */
export function seeCause(
  env: CycleEnv, body: KubeObject, book: Bookkeeping, resuming: boolean, cleanup: boolean,
): Sight {
  const salt = body.metadata.uid ?? "";
  const sight: Sight = {
    cause: "noop", essence: undefined, redacted: undefined, diff: [], diffUnavailable: false, salt, now: clock().now(),
    old: typeof book.base === "object" ? book.base : undefined,
  };
  if (body.metadata.deletionTimestamp) {
    sight.cause = cleanup ? "delete" : "free";
    return sight;
  }
  sight.essence = essenceOf(body);
  sight.redacted = redact(sight.essence, env.diffBase.sensitive, salt);
  if (book.base === undefined) {
    sight.cause = "create";
    return sight;
  }
  const { diff, unavailable } = diffFromBase(book.base, sight.redacted, salt);
  sight.diff = diff;
  sight.diffUnavailable = unavailable;
  if (diff.length) sight.cause = "update";
  else if (resuming) sight.cause = "resume";
  return sight;
}

/** Makes a selected handler's context: the cycle's base (made once, on first need), `patch`, the diff, its logger. */
export type ContextMaker = (spec: HandlerSpec, record: ProgressRecord | undefined) => HandlerContext;

/**
 * The handlers of the sight's cause whose filters match, in registration order; one per id.
 * A context is made here only for a handler whose filters read it: a cycle that only adds the
 * finalizer (the first of every new object) runs no handler, and then needs none.
 */
export function selectHandlers(
  env: CycleEnv, sight: Sight & { cause: Cause }, body: KubeObject, book: Bookkeeping, contextOf: ContextMaker,
  resuming: boolean, signal: AbortSignal,
): Selected[] {
  const { cause } = sight;
  const selected: Selected[] = [];
  for (const spec of env.handlers) {
    let wanted: boolean;
    if (spec.kind === "field") wanted = cause === "create" || cause === "update";
    else if (spec.kind === "resume") wanted = cause === "resume" || (cause === "update" && resuming);
    else wanted = spec.kind === cause;
    if (!wanted) continue;
    const record = recordOf(book, spec, cause);
    let ctx: HandlerContext | undefined;
    const o = spec.options;
    if (o.labels || o.annotations || o.when || spec.field) { // most handlers have none: no closure per cycle
      if (!handlerFiltersPass(spec, body, () => (ctx ??= contextOf(spec, record)), signal)) continue;
    }
    if (selectedAlready(selected, spec.id)) continue; // one id runs once per cycle
    selected.push({ spec, ctx, record });
  }
  return selected;
}

/**
 * Kopf's "stealth mode": whether the object is in the operator's scope. It is when a handler was selected, when it
 * is being deleted, or when any changing handler of the resource, of any cause, matches it by its labels,
 * annotations, field value (before or after the change) and `when`. On an object none matches, no diff base is
 * stored, so that matching later is its creation.
 */
export function inScope(
  env: CycleEnv, sight: Sight & { cause: Cause }, body: KubeObject, book: Bookkeeping, selected: readonly Selected[],
  contextOf: ContextMaker, signal: AbortSignal,
): boolean {
  if (selected.length > 0 || sight.cause === "delete") return true;
  for (const spec of env.handlers) {
    const path = spec.field;
    const test = path
      ? (of: () => HandlerContext) =>
        matchAny(spec.options.value, [getField(sight.essence, path), getField(sight.old, path)], of)
      : undefined;
    const make = () => contextOf(spec, recordOf(book, spec, sight.cause));
    if (objectFiltersPass(spec, body, make, signal, test)) return true;
  }
  return false;
}

/**
 * A changing handler's filters (docs/filters.md). Its field filter, as Kopf's: an update or field handler runs
 * only when the change touches the field, and `value` matches the value before or after it, `old` and `new`
 * each side; a create, resume or delete handler, when the value at the field in the object matches `value`.
 */
export function handlerFiltersPass(
  spec: HandlerSpec, body: KubeObject, make: () => HandlerContext, parent: AbortSignal,
): boolean {
  const { options, field } = spec;
  if (!field || (spec.kind !== "field" && spec.kind !== "update")) return objectFiltersPass(spec, body, make, parent);
  return objectFiltersPass(spec, body, make, parent, (contextOf) => {
    const ctx = contextOf(); // its old/new/diff are the field's (contextFor)
    if (ctx.diff.length === 0) return false; // compared as stored: a sensitive field by its digest
    return matchAny(options.value, [ctx.new, ctx.old], contextOf)
      && matchValue(options.old, ctx.old, contextOf) && matchValue(options.new, ctx.new, contextOf);
  });
}

/**
 * Every filter of a handler of any kind on an object: labels, annotations, the field (`test`, else the value
 * at `spec.field` in the object matches `value`), `when`. `make` is asked for the context only if a callback
 * needs one; with `parent`, the context gets a signal of its own for the calls, as a handler does (a
 * listener a filter put on the cycle's signal, shared by many cycles, would outlive the call). A callback's throw
 * is thrown again naming `spec.id`.
 */
export function objectFiltersPass<C extends { signal: AbortSignal }>(
  spec: { id?: string; options: ObjectFilters<C>; field?: readonly string[] | undefined },
  body: KubeObject, make: () => C,
  parent?: AbortSignal, test?: (contextOf: ContextOf<C>) => boolean,
): boolean {
  const { labels, annotations, when } = spec.options;
  if (!labels && !annotations && !when && !spec.field && !test) return true; // most handlers: no closure, no context
  let ctx: C | undefined;
  let endLending: (() => void) | undefined;
  const contextOf = (): C => {
    if (ctx !== undefined) return ctx;
    ctx = make();
    if (parent) endLending = lendSignal(ctx, parent);
    return ctx;
  };
  const path = spec.field;
  const field = test
    ?? (path ? (of: ContextOf<C>) => matchAny(spec.options.value, [getField(body, path)], of) : undefined);
  try {
    return filtersPass(spec.options, body.metadata, field, contextOf);
  } catch (error) {
    // Named: the object's cycle fails with it, and "when broke" alone says not whose filter it was.
    if (parent?.aborted || spec.id === undefined) throw error;
    const message = error instanceof Error ? error.message : String(error);
    const which = "(labels, annotations, value or when)";
    throw new Error(`a filter of '${spec.id}' ${which} threw: ${message}`, { cause: error });
  } finally {
    if (endLending) {
      endLending();
      ctx!.signal = parent!; // the handler's call lends its own (runner.ts)
    }
  }
}

/**
 * Whether a handler of this id is selected already (a loop: Array.prototype.some made hot per cycle is compiled
 * by the JIT's last tier).
 */
function selectedAlready(selected: readonly Selected[], id: string): boolean {
  for (const s of selected) if (s.spec.id === id) return true;
  return false;
}

/** What a handler's progress is recorded under: a resume handler's own purpose, else the cause. */
export function purposeOf(spec: HandlerSpec, cause: Cause): Cause {
  return spec.kind === "resume" ? "resume" : cause;
}

/** A handler's (or sub-handler's) record for this cause, if it is one: of its purpose and not a kept final one. */
export function recordOf(book: Bookkeeping, spec: HandlerSpec, cause: Cause): ProgressRecord | undefined {
  return recordFor(book, spec.id, purposeOf(spec, cause));
}

export function recordFor(book: Bookkeeping, id: string, purpose: Cause): ProgressRecord | undefined {
  const record = book.progress.get(id);
  return record && record.purpose === purpose && !record.final ? record : undefined;
}

/**
 * A handler's context: `base` (the cycle's ObjectContext) with the change, its progress and a
 * logger naming it. `at`: when the cycle selected its handlers (ctx.runtime counts to it).
 */
export function contextFor(
  env: CycleEnv, sight: Sight & { cause: Cause }, body: KubeObject, base: ObjectContext, patch: Patch,
  spec: HandlerSpec, record: ProgressRecord | undefined, at: number,
): HandlerContext {
  const started = record ? new Date(record.started) : new Date(sight.now);
  const ctx: HandlerContext = {
    ...base, patch, diff: sight.diff, old: sight.old, new: sight.essence, reason: sight.cause,
    diffUnavailable: sight.diffUnavailable, subhandler: subhandlerOutsideCall, // due.ts lends it for the call
    retry: record?.retries ?? 0, started, runtime: at - started.getTime(),
    logger: base.logger.child({ namespace: body.metadata.namespace, name: body.metadata.name, handler: spec.id }),
  };
  if (spec.field) { // Kopf's: a handler with a field filter sees the change of its field
    const path = spec.field;
    ctx.old = getField(sight.old, path);
    ctx.new = getField(sight.essence, path);
    ctx.diff = fieldDiff(sight.old, sight.redacted, path);
  }
  return ctx;
}

/** Neither succeeded nor failed for good. */
export function isPending(record: ProgressRecord | undefined): boolean {
  return !record?.success && !record?.failure;
}
