// Daemons and timers (on.daemon, on.timer): what they see and take, the spec the registry keeps
// of each, the checks of their options, and their `on.*` functions. reconciling/daemons/ runs
// them, one per matching object, beside the object's handlers.

import { parseSelector, type KubeObject, type ResourceSelector } from "../../kube/index.ts";
import type { Aliases } from "../aliases.ts";
import type { MetaMatchers, ValueMatcher } from "../filters.ts";
import { checkOptionNames, everyKeyOf, filterField, shownSelector, type Wanted } from "../registration.ts";
import type { FieldPath, ObjectContext, Patch } from "../types.ts";
import { reservedId, STATUS_KEY } from "../keys.ts";
import { checkRetrying } from "./retrying.ts";

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
  /** Attempts of this call so far: 0 on its first, 1 on its first retry (each call starts again at 0). */
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
  /**
   * Seconds a daemon, or a timer's call, may go on after its signal aborted before it is abandoned and named in a
   * warning. Default 5.
   */
  cancellationTimeout?: number;
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
  /** Seconds from `ctx.stopped` (asked to stop) to `ctx.signal` (made to stop: its I/O aborts). Default 0. */
  cancellationBackoff?: number;
  /** What a throw other than TemporaryError/PermanentError means. Default "temporary" (restarted after `backoff`). */
  errors?: "temporary" | "permanent" | "ignored";
  /** Most runs (the first and its restarts after a throw) before it is not restarted again. Default unlimited. */
  retries?: number;
}

/** Options of on.timer (docs/daemons.md). */
export interface TimerOptions<T extends object = KubeObject> extends BackgroundOptions<T> {
  /**
   * Seconds between calls. Without it, `idle` is required: the timer is called once the object has been
   * unchanged that long, then again only after its next change has been left alone as long (Kopf's `idle=`).
   */
  interval?: number;
  /** Run only once the object has been unchanged (its spec, labels, annotations) this many seconds. */
  idle?: number;
  /** Keep a fixed schedule (every `interval` from the first call) regardless of how long a call runs. */
  sharp?: boolean;
  /** What an error other than TemporaryError/PermanentError means. Default "temporary" (retried after `backoff`). */
  errors?: "temporary" | "permanent" | "ignored";
  /** Most attempts of one call before it fails (until the next interval). Default unlimited. */
  retries?: number;
}

/** A daemon or a timer: run by reconciling/ beside the handlers, one per matching object. */
export interface BackgroundSpec {
  id: string;
  kind: "daemon" | "timer";
  selector: ResourceSelector;
  wanted: Wanted;
  fn: DaemonFn | TimerFn;
  options: DaemonOptions & Partial<TimerOptions>;
  /** The `field` filter as a path. */
  field?: string[];
}

export function checkBackgroundOptions(
  where: string, kind: BackgroundSpec["kind"], options: BackgroundSpec["options"] | undefined,
): void {
  const positive = (v: unknown) => typeof v === "number" && v > 0;
  const interval = options?.interval;
  if (kind === "timer" && !(interval === undefined ? positive(options?.idle) : positive(interval))) {
    throw new Error(`${where}: needs { interval } or { idle } in seconds > 0`);
  }
  if (kind === "timer" && options?.sharp && interval === undefined) {
    throw new Error(`${where}: sharp needs { interval }`);
  }
  for (const key of ["initialDelay", "backoff", "cancellationTimeout", "cancellationBackoff", "idle"] as const) {
    const v = options?.[key];
    if (v !== undefined && !(typeof v === "number" && v >= 0)) {
      throw new Error(`${where}: ${key} must be a number of seconds ≥ 0`);
    }
  }
  checkRetrying(where, options);
}

const BACKGROUND_OPTIONS = [
  "id", "initialDelay", "backoff", "finalizer", "cancellationTimeout", "labels", "annotations", "when", "field",
  "value", "children", "errors", "retries",
] as const;
const OPTION_NAMES = {
  daemon: everyKeyOf<DaemonOptions>()([...BACKGROUND_OPTIONS, "cancellationBackoff"]),
  timer: everyKeyOf<TimerOptions>()([...BACKGROUND_OPTIONS, "interval", "idle", "sharp"]),
};

/** on.daemon and on.timer, recording into `store`. */
export function backgroundOn(store: { background: BackgroundSpec[]; aliases: Aliases }) {
  const add = (
    kind: BackgroundSpec["kind"], selector: ResourceSelector, fn: DaemonFn | TimerFn,
    options: BackgroundSpec["options"],
  ): void => {
    if (typeof fn !== "function") throw new Error(`on.${kind}(${shownSelector(selector)}, ...) needs a function`);
    const wanted = parseSelector(selector);
    const where = `on.${kind}(${shownSelector(selector)})`;
    if (options !== undefined) checkOptionNames(where, options, OPTION_NAMES[kind]);
    const n = store.background.filter((b) => b.kind === kind && b.wanted.text === wanted.text).length + 1;
    const id = options?.id ?? (fn.name && fn.name !== "anonymous" ? fn.name : `${kind}/${wanted.text}#${n}`);
    // No progress record: only what its result would overwrite (status.kobun) is kobun's.
    const reserved = id === "" || id === STATUS_KEY ? reservedId(id) : undefined;
    if (reserved) throw new Error(`on.${kind} ${JSON.stringify(id)}: ${reserved}`);
    if (store.background.some((b) => b.id === id && b.wanted.text === wanted.text)) {
      throw new Error(
        `a daemon or timer with id ${JSON.stringify(id)} is already registered for ${wanted.text}: ` +
          "pass a distinct { id }",
      );
    }
    checkBackgroundOptions(`${kind} ${id}`, kind, options);
    const field = filterField(`${kind} ${id}`, options ?? {});
    store.aliases.note(selector);
    store.background.push({ id, kind, selector, wanted, fn, options: options ?? {}, ...(field ? { field } : {}) });
  };
  return {
    daemon: (selector: ResourceSelector, fn: DaemonFn, options: DaemonOptions = {}) => {
      add("daemon", selector, fn, options);
      return fn;
    },
    timer: (selector: ResourceSelector, fn: TimerFn, options: TimerOptions) => {
      if (typeof options === "function") [options, fn] = [fn as unknown as TimerOptions, options as TimerFn];
      add("timer", selector, fn, options);
      return fn;
    },
  };
}
