// The shapes of daemons and timers as users write them (on.daemon, on.timer): their contexts
// and options. No behaviour here; types.ts re-exports them.

import type { KubeObject } from "../kube/index.ts";
import type { MetaMatchers, ValueMatcher } from "./filters.ts";
import type { FieldPath, ObjectContext, Patch } from "./types.ts";

/**
 * What a daemon sees: `body`, `spec`, `meta`, `status`, `labels`, `annotations` are live (the newest
 * state the watch saw, read anew at each access: do not destructure them); `signal` is its stop flag.
 */
export interface DaemonContext<T extends object = KubeObject> extends ObjectContext<T> {
  /** Restarts after a throw, 0 on the first run. */
  retry: number;
  /** Merged into the object after the daemon returns or throws (a restart's too), as a timer's. */
  patch: Patch<T>;
  /** Aborts as soon as the daemon is asked to stop; `signal` aborts `cancellationBackoff` seconds later. */
  stopped: AbortSignal;
}

/** What a timer sees: a `patch` merged into the object after the call, like a handler's. */
export interface TimerContext<T extends object = KubeObject> extends ObjectContext<T> {
  patch: Patch<T>;
  /** Attempts after an error since the last good call, 0 on the first. */
  retry: number;
  /** When this call's first attempt started. */
  started: Date;
}

/** A daemon: runs as long as its object exists and matches; it should return when `ctx.signal` aborts. */
export type DaemonFn<T extends object = KubeObject> = (ctx: DaemonContext<T>) => unknown;
/**
 * A timer: called every `interval` seconds while its object exists and matches; its `ctx.patch` is written after
 * each call.
 */
export type TimerFn<T extends object = KubeObject> = (ctx: TimerContext<T>) => unknown;

/** Options shared by daemons and timers (seconds, as everywhere in the handler API). */
export interface BackgroundOptions<T extends object = KubeObject> {
  /** Names the daemon or timer (its `status.<id>` result for a timer). Default: the function name. */
  id?: string;
  /** Seconds to wait after the object appears (or the operator starts or resumes) before the first run. */
  initialDelay?: number;
  /** Seconds between restarts of a daemon that threw, or between a timer's retries. Default 60. */
  backoff?: number;
  /** Hold the object with kobun's finalizer while it runs, so a deletion waits for it to stop. Default true. */
  finalizer?: boolean;
  labels?: MetaMatchers<ObjectContext<T>>;
  annotations?: MetaMatchers<ObjectContext<T>>;
  when?: (ctx: ObjectContext<T>) => boolean;
  /** Runs only while the object has this field, or while it matches `value` (docs/filters.md). */
  field?: FieldPath<T> | readonly string[];
  value?: ValueMatcher<ObjectContext<T>>;
  /** As HandlerOptions' `children`. */
  children?: readonly string[];
}

/** Options of on.daemon (docs/daemons.md). */
export interface DaemonOptions<T extends object = KubeObject> extends BackgroundOptions<T> {
  /** Seconds a daemon may go on after its signal aborted before it is abandoned and named in a warning. Default 5. */
  cancellationTimeout?: number;
  /** Seconds from `ctx.stopped` (asked to stop) to `ctx.signal` (made to stop: its I/O aborts). Default 0. */
  cancellationBackoff?: number;
  /** What a throw other than TemporaryError/PermanentError means. Default "temporary" (restarted after `backoff`). */
  errors?: "temporary" | "permanent" | "ignored";
  /** Most runs (the first and its restarts after a throw) before it is not restarted again. Default unlimited. */
  retries?: number;
}

/** Options of on.timer (docs/daemons.md). */
export interface TimerOptions<T extends object = KubeObject> extends BackgroundOptions<T> {
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
