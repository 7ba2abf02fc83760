// The handlers handling/ runs in an object's cycle: the changing ones (on.create, on.update,
// on.delete, on.resume, on.field) and on.event (every watch event, no progress, no retries). What
// they see and take, the spec the registry keeps of each, the checks of their options, and their
// `on.*` functions.

import { parseSelector, type KubeObject, type ResourceSelector } from "../../kube/index.ts";
import type { Aliases } from "../aliases.ts";
import { fieldPath, type MetaMatchers, type ValueMatcher } from "../filters.ts";
import {
  changeableField, checkOptionNames, everyKeyOf, filterField, RegistrationError, shownSelector, type Wanted,
} from "../registration.ts";
import { reservedId } from "../keys.ts";
import { checkBackoffAndTimeout, checkRetrying } from "./retrying.ts";
import type { Diff, FieldPath, ObjectContext, Patch, ValueAt } from "../types.ts";

/** Why the changing handlers run now (Kopf's "reason"). */
export type Cause = "create" | "update" | "delete" | "resume";

/** What a HandlerSpec is registered by: a changing handler's cause, on.field, or on.event. */
export type HandlerKind = Cause | "field" | "event";

/** What create/update/delete/resume/field handlers see. */
export interface HandlerContext<T extends object = KubeObject> extends ObjectContext<T> {
  patch: Patch<T>;
  diff: Diff;
  /**
   * The last handled state and the current one, as `diff` compares them (Kopf's old/new): the object
   * without status, its metadata only labels and annotations; with the handler's `field` option,
   * that field's values. `old` is undefined on creation and when `diffUnavailable`. Untyped: their
   * shape depends on the options.
   */
  old: any;
  new: any;
  reason: Cause;
  /** 0 on the first attempt. */
  retry: number;
  /** When the first attempt started (survives restarts). */
  started: Date;
  /** ms since `started`. */
  runtime: number;
  /**
   * True when the last handled state was stored only as a digest (it was larger than
   * `handling.diffBaseLimit`): a change is known, but not what changed; `old` is undefined and
   * `diff` is one item `{ op: "change", path: [], unknown: "too-large" }`.
   */
  diffUnavailable: boolean;
  /**
   * Registers a sub-handler of this handler (docs/handlers.md, "Sub-handlers"): run after this handler
   * returns, as a handler of its own with the id `<this id>/<id>`, its own progress record, retries,
   * backoff, timeout and outcome. This handler succeeds once every sub-handler it registered did, and
   * fails if one failed for good; until then it is called again whenever one is due, registers them
   * again, and only the unfinished ones run.
   */
  subhandler(id: string, fn: HandlerFn<T>, options?: SubhandlerOptions): void;
}

/** A sub-handler's own limits (HandlerOptions' meaning); unset, the operator's defaults, not the parent's. */
export type SubhandlerOptions = Pick<HandlerOptions, "retries" | "backoff" | "timeout" | "errors">;

/** What on.event handlers see: every processed watch event, no progress, no retries. */
export interface EventContext<T extends object = KubeObject> extends ObjectContext<T> {
  type: "listed" | "added" | "modified" | "deleted";
}

/** What a field handler sees: `old`/`new` are the field's values, typed by the field's path. */
export interface FieldContext<T extends object = KubeObject, P extends string = string> extends HandlerContext<T> {
  old: ValueAt<T, P> | undefined;
  new: ValueAt<T, P> | undefined;
}

/** A create/update/delete/resume handler: what it returns is stored at `status.<id>`; a throw is retried. */
export type HandlerFn<T extends object = KubeObject> = (ctx: HandlerContext<T>) => unknown;
/** An on.event handler: what it returns is ignored; a throw is logged, never retried. */
export type EventHandlerFn<T extends object = KubeObject> = (ctx: EventContext<T>) => unknown;
/** An on.field handler: as a HandlerFn, its `ctx.old`/`ctx.new` the field's values. */
export type FieldHandlerFn<T extends object = KubeObject, P extends string = string> =
  (ctx: FieldContext<T, P>) => unknown;

/** Options of on.create/update/delete/resume/field (docs/handlers.md, docs/filters.md). */
export interface HandlerOptions<T extends object = KubeObject> {
  /** Names the handler's progress annotation and its `status.<id>` result. Default: the function name. */
  id?: string;
  /** Most attempts before the handler fails for good. Default: settings (unlimited). */
  retries?: number;
  /** Seconds between attempts after an error that names no delay. Default 60. */
  backoff?: number;
  /** Seconds from the first attempt after which the handler fails for good. */
  timeout?: number;
  /** What an error other than TemporaryError/PermanentError means. Default "temporary". */
  errors?: "temporary" | "permanent" | "ignored";
  /** Only objects whose labels match (docs/filters.md); a predicate gets the value and the handler's context. */
  labels?: MetaMatchers<HandlerContext<T>>;
  annotations?: MetaMatchers<HandlerContext<T>>;
  when?: (ctx: HandlerContext<T>) => boolean;
  /**
   * Only objects that have this field (a dotted path, or a list of keys), or where it matches `value`.
   * On an update it also narrows `old`/`new`/`diff` to the field, and updates that do not touch it
   * are skipped (Kopf's `field=`).
   */
  field?: FieldPath<T> | readonly string[];
  /** Matches the value at `field` (on an update: the old or the new value, as Kopf's `value=`). */
  value?: ValueMatcher<HandlerContext<T>>;
  /**
   * Fields ("spec.password") whose values must never be stored on the object as part of the
   * diff base: only a digest is kept, and diffs name the field without values. Applies to the
   * resource as a whole (every handler's diff). A Secret's data/stringData are always sensitive.
   */
  sensitive?: readonly string[];
  /**
   * Other resources this handler reads or writes through `ctx.api` (its children), as selectors
   * like "configmaps" or "apps/v1/deployments": `kobun manifests` grants the operator
   * get/list/watch/create/update/patch/delete on them where it handles objects.
   */
  children?: readonly string[];
}

/** Options of `on.update`: HandlerOptions, plus matchers of the field's value before and after the change. */
export interface UpdateOptions<T extends object = KubeObject> extends HandlerOptions<T> {
  /** Matches the value at `field` before the change (needs `field`). */
  old?: ValueMatcher<HandlerContext<T>>;
  /** Matches the value at `field` after the change (needs `field`). */
  new?: ValueMatcher<HandlerContext<T>>;
}

/** Options of `on.delete`: HandlerOptions, plus whether to hold the object with a finalizer. */
export interface DeleteOptions<T extends object = KubeObject> extends HandlerOptions<T> {
  /**
   * Hold no finalizer for this handler: it runs only while kobun's finalizer holds the object for
   * something else (another delete handler, a daemon, a timer), as Kopf's `optional=True`.
   */
  optional?: boolean;
}

/** Options of `on.field`: which field to follow, and optional matchers on its old and new values. */
export interface FieldOptions<T extends object = KubeObject, P extends string = string>
  extends Omit<HandlerOptions<T>, "field"> {
  /** A dotted path ("spec.size"; typed tokens check it against the object type) or a list of keys. */
  field: P | readonly string[];
  /** Matches the field's value before or after the change (Kopf's `value`: either side of the transition). */
  value?: ValueMatcher<HandlerContext<T>>;
  /** Matches the field's value before the change. */
  old?: ValueMatcher<HandlerContext<T>>;
  /** Matches the field's value after the change. */
  new?: ValueMatcher<HandlerContext<T>>;
}

/**
 * Options of `on.event`, the raw watch-event handler: no retries, no state, no finalizer; it sees
 * every event of the matching objects.
 */
export interface EventOptions<T extends object = KubeObject> {
  /** Names it in logs. Default: the function name. */
  id?: string;
  /** As HandlerOptions' `children`: resources touched through `ctx.api`, granted by `kobun manifests`. */
  children?: readonly string[];
  /** Only objects whose labels match (as HandlerOptions' `labels`). */
  labels?: MetaMatchers<EventContext<T>>;
  /** Only objects whose annotations match. */
  annotations?: MetaMatchers<EventContext<T>>;
  /** Only events for which this returns true. */
  when?: (ctx: EventContext<T>) => boolean;
  /** Only objects that have this field, or where it matches `value` (as it is in the event's object). */
  field?: FieldPath<T> | readonly string[];
  value?: ValueMatcher<EventContext<T>>;
}

export interface HandlerSpec {
  id: string;
  kind: HandlerKind;
  selector: ResourceSelector;
  fn: HandlerFn | EventHandlerFn;
  options: Omit<HandlerOptions, "field"> & Partial<DeleteOptions> & Partial<FieldOptions> & Partial<UpdateOptions>;
  /** The `field` option as a path (on.field's, or any handler's field filter). */
  field?: string[];
  /** `options.sensitive` as paths. */
  sensitive?: string[][];
  /** Registration order, for running handlers in the order they were written. */
  order: number;
}

export function sensitivePaths(id: string, fields: unknown): string[][] {
  const ok = Array.isArray(fields)
    && fields.every((f) => typeof f === "string" && f.length > 0 && !f.split(".").includes(""));
  if (!ok) throw new Error(`handler ${id}: sensitive must be a list of field paths like ["spec.password"]`);
  return (fields as string[]).map((f) => fieldPath(f));
}

export function checkHandlerOptions(id: string, options: HandlerSpec["options"]): void {
  checkRetrying(`handler ${id}`, options);
  // a timeout of 0 is refused, as the settings' handling.timeout and on.reconcile's are
  checkBackoffAndTimeout(`handler ${id}`, options);
  if (options.children === undefined) return;
  if (!Array.isArray(options.children)) {
    throw new Error(`handler ${id}: children must be a list of resources like ["configmaps", "apps/v1/deployments"]`);
  }
  for (const child of options.children) {
    try {
      parseSelector(child);
    } catch (error) {
      throw new Error(`handler ${id}: children: ${(error as Error).message}`);
    }
  }
}

const HANDLER_OPTIONS = everyKeyOf<HandlerOptions>()([
  "id", "retries", "backoff", "timeout", "errors", "labels", "annotations", "when", "field", "value", "sensitive",
  "children",
]);
/** Each kind's option names (a name of another kind's is refused as a typo is). */
const OPTION_NAMES: Record<HandlerKind, readonly string[]> = {
  create: HANDLER_OPTIONS,
  resume: HANDLER_OPTIONS,
  update: everyKeyOf<UpdateOptions>()([...HANDLER_OPTIONS as HandlerOptionName[], "old", "new"]),
  delete: everyKeyOf<DeleteOptions>()([...HANDLER_OPTIONS as HandlerOptionName[], "optional"]),
  field: everyKeyOf<FieldOptions>()([...HANDLER_OPTIONS as HandlerOptionName[], "old", "new"]),
  event: everyKeyOf<EventOptions>()(["id", "children", "labels", "annotations", "when", "field", "value"]),
};
type HandlerOptionName = keyof HandlerOptions & keyof FieldOptions;

/** The handler specs of a registry and what registering them needs (Registry's own state). */
export interface HandlerStore {
  handlers: HandlerSpec[];
  /** Each spec's parsed selector (Registry.forResource matches by it). */
  parsed: Map<HandlerSpec, Wanted>;
  /** Handlers so far per kind and selector: the number in a default id. */
  counters: Map<string, number>;
  aliases: Aliases;
}

/** Checks and records one handler spec. */
function addHandler(
  store: HandlerStore, kind: HandlerKind, selector: ResourceSelector, fn: HandlerFn | EventHandlerFn,
  options: HandlerSpec["options"],
): void {
  if (typeof fn !== "function") {
    throw new Error(`on.${kind}(${shownSelector(selector)}, ...) needs a handler function`);
  }
  const wanted = parseSelector(selector);
  checkOptionNames(`on.${kind}(${shownSelector(selector)})`, options, OPTION_NAMES[kind]);
  const n = (store.counters.get(`${kind}/${wanted.text}`) ?? 0) + 1;
  store.counters.set(`${kind}/${wanted.text}`, n);
  if (typeof options.id === "string" && options.id.includes("/")) {
    // A sub-handler's id is `<parent id>/<its id>`: a handler id with "/" could be one of them.
    throw new RegistrationError(
      `on.${kind} handler ${JSON.stringify(options.id)}: the id must not contain "/" (sub-handler ids are ` +
        "<parent>/<child>)",
    );
  }
  const id = options.id ?? (fn.name && fn.name !== "anonymous" ? fn.name : `${kind}/${wanted.text}#${n}`);
  const reserved = reservedId(id);
  if (reserved) throw new RegistrationError(`on.${kind} handler ${JSON.stringify(id)}: ${reserved}`);
  for (const other of store.handlers) {
    if (other.id === id && other.kind === kind && store.parsed.get(other)!.text === wanted.text) {
      throw new Error(
        `a ${kind} handler with id ${JSON.stringify(id)} is already registered for ${wanted.text}: ` +
          "pass a distinct { id }",
      );
    }
  }
  checkHandlerOptions(id, options);
  const spec: HandlerSpec = { id, kind, selector, fn, options, order: store.handlers.length };
  const field = filterField(`${kind} handler ${id}`, options);
  if (field) spec.field = changeableField(kind, id, field);
  if (options.sensitive !== undefined) spec.sensitive = sensitivePaths(id, options.sensitive);
  store.handlers.push(spec);
  store.aliases.note(selector);
  store.parsed.set(spec, wanted);
}

/** on.create, on.update, on.delete, on.resume, on.field and on.event, recording into `store`. */
export function handlersOn(store: HandlerStore) {
  const changing =
    (kind: HandlerKind) => (selector: ResourceSelector, fn: HandlerFn, options: HandlerOptions = {}) => {
      addHandler(store, kind, selector, fn, options);
      return fn;
    };
  return {
    create: changing("create"),
    update: changing("update"),
    delete: changing("delete"),
    resume: changing("resume"),
    field: (selector: ResourceSelector, options: FieldOptions, fn: HandlerFn) => {
      if (typeof options === "function") [options, fn] = [fn as unknown as FieldOptions, options as HandlerFn];
      if (!options?.field) throw new Error("on.field needs { field: \"spec.something\" }");
      addHandler(store, "field", selector, fn, options);
      return fn;
    },
    event: (selector: ResourceSelector, fn: EventHandlerFn, options: EventOptions = {}) => {
      addHandler(store, "event", selector, fn as never, options as HandlerOptions);
      return fn;
    },
  };
}
