// The shapes of handlers as users write them: contexts, options, diffs. No behaviour here,
// so that registry, engine and the public API can all depend on it.

import type { KubeObject, ObjectMeta, Resource } from "../kube/types.ts";
import type { Logger } from "../util/log.ts";
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
  labels?: MetaMatchers;
  annotations?: MetaMatchers;
  when?: (ctx: EventContext) => boolean;
}
