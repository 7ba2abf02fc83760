// The shapes of handlers as users write them: contexts, options, diffs. No behaviour here,
// so that registry, engine and the public API can all depend on it.

import type { KubeObject, ObjectMeta, Resource } from "../kube/types.ts";
import type { Logger } from "../util/log.ts";
import type { Api } from "./api.ts";
import type { MetaMatchers, ValueMatcher } from "./filters.ts";

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
export type Diff = readonly DiffItem[];

/** Merged into one merge-patch after the handlers of a cycle ran. */
export interface Patch {
  metadata: { labels?: Record<string, string | null>; annotations?: Record<string, string | null>; [key: string]: any };
  spec: Record<string, any>;
  status: Record<string, any>;
  [key: string]: any;
}

/** What every handler sees about the object. */
export interface ObjectContext {
  body: KubeObject;
  spec: Record<string, any>;
  meta: ObjectMeta;
  status: Record<string, any>;
  uid: string;
  name: string;
  namespace: string | undefined;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Per-object scratch space kept in memory across cycles while the operator runs. */
  memo: Record<string, any>;
  resource: Resource;
  logger: Logger;
  /** Aborted on shutdown, freeze-abort, or the handler's timeout. */
  signal: AbortSignal;
  /**
   * The API server, with the operator's credentials and this handler's `signal` (see api.ts).
   * Writes to this very object are folded into `patch` as well, so they do not come back as
   * an update; writes to other objects are changes like anyone's.
   */
  api: Api;
  /** Kubernetes Events about any object, batched and rate-limited (`event.info(child, "Created", "...")`). */
  event: EventRecorder;
}

/** Posts Kubernetes Events; identical ones are counted into one, and each object has a budget (posting/). */
export interface EventRecorder {
  info(object: KubeObject, reason: string, message: string): void;
  warn(object: KubeObject, reason: string, message: string): void;
}

/** What create/update/delete/resume/field handlers see. */
export interface HandlerContext extends ObjectContext {
  patch: Patch;
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
}

/** What on.event handlers see: every processed watch event, no progress, no retries. */
export interface EventContext extends ObjectContext {
  type: "listed" | "added" | "modified" | "deleted";
}

export type HandlerFn = (ctx: HandlerContext) => unknown;
export type EventHandlerFn = (ctx: EventContext) => unknown;

export interface HandlerOptions {
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
  labels?: MetaMatchers;
  annotations?: MetaMatchers;
  when?: (ctx: HandlerContext) => boolean;
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

export interface DeleteOptions extends HandlerOptions {
  /** Do not hold the object with a finalizer: the handler runs only if kobun sees the deletion in time. */
  optional?: boolean;
}

export interface FieldOptions extends HandlerOptions {
  field: string | readonly string[];
  /** Matches the field's new value (Kopf's `value`). */
  value?: ValueMatcher;
  old?: ValueMatcher;
  new?: ValueMatcher;
}

export interface EventOptions {
  id?: string;
  /** As HandlerOptions' `children`: resources touched through `ctx.api`, granted by `kobun manifests`. */
  children?: readonly string[];
  labels?: MetaMatchers;
  annotations?: MetaMatchers;
  when?: (ctx: EventContext) => boolean;
}

/** What a daemon sees: the object as it was when the daemon started; `signal` is its stop flag. */
export interface DaemonContext extends ObjectContext {
  /** Restarts after a throw, 0 on the first run. */
  retry: number;
}

/** What a timer sees: a `patch` merged into the object after the call, like a handler's. */
export interface TimerContext extends ObjectContext {
  patch: Patch;
  /** Attempts after an error since the last good call, 0 on the first. */
  retry: number;
  /** When this call's first attempt started. */
  started: Date;
}

export type DaemonFn = (ctx: DaemonContext) => unknown;
export type TimerFn = (ctx: TimerContext) => unknown;

/** Options shared by daemons and timers (seconds, as everywhere in the handler API). */
export interface BackgroundOptions {
  /** Names the daemon or timer (its `status.<id>` result for a timer). Default: the function name. */
  id?: string;
  /** Seconds to wait after the object appears (or the operator starts or resumes) before the first run. */
  initialDelay?: number;
  /** Seconds between restarts of a daemon that threw, or between a timer's retries. Default 60. */
  backoff?: number;
  /** Hold the object with kobun's finalizer while it runs, so a deletion waits for it to stop. Default true. */
  finalizer?: boolean;
  labels?: MetaMatchers;
  annotations?: MetaMatchers;
  when?: (ctx: ObjectContext) => boolean;
  /** As HandlerOptions' `children`. */
  children?: readonly string[];
}

export interface DaemonOptions extends BackgroundOptions {
  /** Seconds a daemon may go on after its signal aborted before it is abandoned and named in a warning. Default 5. */
  cancellationTimeout?: number;
}

export interface TimerOptions extends BackgroundOptions {
  /** Seconds between calls. */
  interval: number;
  /** Run only once the object has been unchanged (its spec, labels, annotations) this many seconds. */
  idle?: number;
  /** Keep a fixed schedule (every `interval` from the first call) regardless of how long a call runs. */
  sharp?: boolean;
  /** What an error other than TemporaryError/PermanentError means. Default "temporary" (retried after `backoff`). */
  errors?: "temporary" | "permanent" | "ignored";
  /** Most attempts of one call before it fails (until the next interval). Default unlimited. */
  retries?: number;
}
