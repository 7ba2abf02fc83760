// The shapes of handlers as users write them: contexts, options, diffs. No behaviour here,
// so that registry, engine and the public API can all depend on it.

import type { KubeObject, ObjectMeta, Resource } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import type { Api } from "./api.ts";
import type { AdoptOptions } from "./children.ts";
import type { MetaMatchers, ValueMatcher } from "./filters.ts";
import type { Index, IndexEntries } from "./indexes.ts";
import type { EventRecorder } from "./event-types.ts";

/** Why the changing handlers run now (Kopf's "reason"). */
export type Cause = "create" | "update" | "delete" | "resume";

export type HandlerKind = Cause | "field" | "event";

/** One difference between the last handled state and now; `path` is relative to the object (or to the field). */
export interface DiffItem {
  op: "add" | "change" | "remove";
  path: string[];
  old: unknown;
  new: unknown;
  /**
   * Set when the values are not known (both are undefined): "sensitive" for a field whose last
   * handled value was stored only as a digest (a Secret's data, a handler's `sensitive` field);
   * "too-large" for the one item (path []) of a diff whose base was too large to store.
   */
  unknown?: "sensitive" | "too-large";
}
/** What changed between the last handled state and now, one item per changed field (Kopf's diff). */
export type Diff = readonly DiffItem[];

/**
 * A JSON merge patch of T: every field optional, `null` deletes it, arrays are replaced whole
 * (RFC 7386). On untyped objects (any), any.
 */
export type MergePatch<T> = 0 extends 1 & T ? any
  : T extends readonly unknown[] ? T
  : T extends object ? { -readonly [K in keyof T]?: MergePatch<T[K]> | null }
  : T;

/** The spec, status and other top-level fields of an object type (untyped: open records). */
export type SpecOf<T> = T extends { spec?: infer S } ? NonNullable<S> : Record<string, never>;
/** The status of an object type, every field optional (untyped: an empty record). */
export type StatusOf<T> = T extends { status?: infer S } ? Partial<NonNullable<S>> : Record<string, never>;
type OwnFields<T> = Omit<T, "apiVersion" | "kind" | "metadata" | "spec" | "status">;

/**
 * Merged into one merge-patch after the handlers of a cycle ran. Typed by the resource's object
 * type when the handler was registered with a typed token (`resource<T>(...)`).
 */
export type Patch<T extends object = KubeObject> = {
  metadata: { labels?: Record<string, string | null>; annotations?: Record<string, string | null>; [key: string]: any };
  spec: MergePatch<SpecOf<T>>;
  status: MergePatch<StatusOf<T>>;
} & MergePatch<OwnFields<T>>;

type Depth = [never, 0, 1, 2, 3, 4];
/**
 * The dotted paths of T's fields ("spec.size", "spec.backup.schedule"), five levels deep at
 * most; on open records (index signatures, any) every string.
 */
export type FieldPath<T, D extends number = 5> = [D] extends [never] ? never
  : 0 extends 1 & T ? string
  : T extends readonly unknown[] ? never
  : T extends object
    ? string extends keyof T ? string
    : { [K in keyof T & string]: K | `${K}.${FieldPath<NonNullable<T[K]>, Depth[D]>}` }[keyof T & string]
  : never;

/** The type of the field at a dotted path of T (unknown where the path leaves the type). */
export type ValueAt<T, P extends string> = 0 extends 1 & T ? any
  : P extends `${infer Head}.${infer Rest}`
    ? (Head extends keyof NonNullable<T> ? ValueAt<NonNullable<T>[Head], Rest> : unknown)
  : P extends keyof NonNullable<T> ? NonNullable<T>[P] : unknown;

/** What every handler sees about the object. */
export interface ObjectContext<T extends object = KubeObject> {
  body: T;
  spec: SpecOf<T>;
  meta: ObjectMeta;
  /** Empty when the object has no status yet. */
  status: StatusOf<T>;
  uid: string;
  name: string;
  namespace: string | undefined;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Per-object scratch space kept in memory across cycles while the operator runs. */
  memo: Record<string, any>;
  resource: Resource;
  logger: Logger;
  /**
   * Aborted on shutdown, freeze-abort, the object's deletion (its results are then never written), or the handler's
   * timeout.
   */
  signal: AbortSignal;
  /**
   * The API server, with the operator's credentials and this handler's `signal` (see handling/api.ts).
   * Writes to this very object are taken as handled, so they do not come back as an update: the
   * fields a write names go into the stored last-handled state (the write is not sent again), so
   * a change another client made meanwhile is handled as an update like any. Writes to other
   * objects are changes like anyone's.
   */
  api: Api;
  /** Kubernetes Events about any object, batched and rate-limited (`event.info(child, "Created", "...")`). */
  event: EventRecorder;
  /**
   * `adopt(child, { owner: ctx.body, ...options })`: the handled object owns `child` (controller reference,
   * namespace, `generateName: "<name>-"` when nameless, labels unless `labels: false`). Returns the child.
   */
  adopt<C extends KubeObject>(child: C, options?: AdoptOptions): C & { metadata: ObjectMeta };
  /** The operator's indexes by id (`on.index`), of this resource or any other. */
  indexes: Readonly<Record<string, Index>>;
}

/** What create/update/delete/resume/field handlers see. */
export interface HandlerContext<T extends object = KubeObject> extends ObjectContext<T> {
  patch: Patch<T>;
  diff: Diff;
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

export type HandlerFn<T extends object = KubeObject> = (ctx: HandlerContext<T>) => unknown;
export type EventHandlerFn<T extends object = KubeObject> = (ctx: EventContext<T>) => unknown;
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
  /** Do not hold the object with a finalizer: the handler runs only if kobun sees the deletion in time. */
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

/**
 * Returns the object's entries in the index: { key: value, ... }, or, for keys that are not strings (tuples:
 * `[namespace, name]`), a Map or a list of [key, value] pairs; nothing leaves the object out.
 */
export type IndexFn<T extends object = KubeObject> = (ctx: ObjectContext<T>) => IndexEntries | undefined | null | void;

/** Options of on.index (docs/indexes.md). */
export interface IndexOptions<T extends object = KubeObject> {
  /** Names the index: handlers read `ctx.indexes.<id>`. Default: the function name. */
  id?: string;
  labels?: MetaMatchers<ObjectContext<T>>;
  annotations?: MetaMatchers<ObjectContext<T>>;
  when?: (ctx: ObjectContext<T>) => boolean;
  /** Only objects that have this field, or where it matches `value`. */
  field?: FieldPath<T> | readonly string[];
  value?: ValueMatcher<ObjectContext<T>>;
}

export type { ActivityContext, ActivityFn, ActivityOptions, LoginContext, LoginFn } from "./activity-types.ts";
export type { EventRecorder, ExceptionEventOptions } from "./event-types.ts";
export type {
  BackgroundOptions, DaemonContext, DaemonFn, DaemonOptions, TimerContext, TimerFn, TimerOptions,
} from "./background-types.ts";
