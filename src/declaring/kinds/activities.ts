// The operator-wide handlers, activities (on.startup, on.cleanup, on.probe, on.login): no object,
// the operator's memo. What they see and take, the spec the registry keeps of each, the checks of
// their options, and their `on.*` functions. activities/ runs them.

import type { LoginResult } from "../../kube/index.ts";
import type { Logger } from "../../util/index.ts";
import type { Api } from "../api.ts";
import type { Index } from "../indexes.ts";
import type { EventRecorder } from "../event-types.ts";
import { checkBackoffAndTimeout, checkRetrying } from "./retrying.ts";
import { checkOptionNames, everyKeyOf } from "../registration.ts";

/** What on.startup and on.cleanup see: no object, the operator's memo, its API client. */
export interface ActivityContext {
  /** Shared with every handler: each object's memo starts as a shallow copy of it. */
  memo: Record<string, any>;
  logger: Logger;
  /** Aborts at shutdown (startup), or at the end of the shutdown grace period (cleanup). */
  signal: AbortSignal;
  api: Api;
  /**
   * The operator's indexes by id (`on.index`). Empty in on.startup (it runs before any watch
   * opens; a reference kept there fills as the watches list), complete in on.probe once the
   * operator is ready, and as last seen in on.cleanup (the watches have stopped).
   */
  indexes: Readonly<Record<string, Index>>;
  /** on.startup: attempts after an error so far, 0 on the first (Kopf's `retry`); 0 elsewhere. */
  retry: number;
  /** on.startup: when its first attempt started; elsewhere when this call did. */
  started: Date;
  /** Kubernetes Events about objects the activity names (`event.info(object, reason, message?)`): none is handled. */
  event: EventRecorder;
}

/** `on.startup`, `on.cleanup` and `on.probe` functions: operator-wide, not per object. */
export type ActivityFn = (ctx: ActivityContext) => unknown;

/** What on.login sees: no API client yet (it is what the login makes), the operator's memo. */
export interface LoginContext {
  memo: Record<string, any>;
  logger: Logger;
  /**
   * Aborts at shutdown, or when the login takes longer than kube.requestTimeout (it then fails, naming the
   * handler).
   */
  signal: AbortSignal;
  /** False at start-up; true when the credentials it returned last expired or were refused (401). */
  renewal: boolean;
}

/** Returns credentials (or a kubeconfig) for the operator, or nothing to leave it to the next login handler. */
export type LoginFn = (
  ctx: LoginContext,
) => LoginResult | undefined | null | void | Promise<LoginResult | undefined | null | void>;

/** Options of `on.startup`, `on.cleanup`, `on.probe` and `on.login`. */
export interface ActivityOptions {
  /** Names it in logs and errors (and a probe's value in /healthz). Default: the function name. */
  id?: string;
  /** on.probe: seconds a value is reused before fn is asked again. Default 10. */
  cacheFor?: number;
  /** on.startup: most attempts before the operator fails (exit 6). Default: handling.retries (unlimited). */
  retries?: number;
  /** on.startup: seconds between attempts after an error that names no delay. Default: handling.backoff (60). */
  backoff?: number;
  /** on.startup: seconds from the first attempt after which it fails. Default: handling.timeout (none). */
  timeout?: number;
  /**
   * on.startup: what an error other than TemporaryError/PermanentError means. Default "temporary" (retried).
   * on.login takes "permanent" alone (Kopf's `errors=PERMANENT`): a login is never retried.
   */
  errors?: "temporary" | "permanent" | "ignored";
}

/**
 * An operator-wide activity: on.startup (before any watch), on.cleanup (after everything stopped), on.probe,
 * on.login.
 */
export type ActivitySpec =
  | { id: string; kind: "startup" | "cleanup" | "probe"; fn: ActivityFn; options: ActivityOptions }
  | { id: string; kind: "login"; fn: LoginFn; options: ActivityOptions };

export function checkActivityOptions(
  kind: ActivitySpec["kind"], id: string, options: ActivityOptions, registered: readonly ActivitySpec[],
): void {
  if (options.cacheFor !== undefined && !(typeof options.cacheFor === "number" && options.cacheFor >= 0)) {
    throw new Error(`${kind} ${id}: cacheFor must be a number of seconds ≥ 0`);
  }
  // A login is never retried (it is asked again at its next renewal): Kopf's errors=PERMANENT says so, and is taken.
  const permanentLogin = kind === "login" && options.errors === "permanent";
  const retrying = (["retries", "backoff", "timeout", "errors"] as const)
    .filter((key) => options[key] !== undefined && !(key === "errors" && permanentLogin));
  if (kind !== "startup" && retrying.length) {
    throw new Error(`${kind} ${id}: ${retrying.join(", ")}: only on.startup is retried (and takes them)`);
  }
  checkRetrying(`startup ${id}`, options);
  checkBackoffAndTimeout(`startup ${id}`, options);
  if (kind === "probe" && registered.some((a) => a.kind === "probe" && a.id === id)) {
    throw new Error(`a probe with id ${JSON.stringify(id)} is already registered: pass a distinct { id }`);
  }
}

const ACTIVITY_OPTIONS = everyKeyOf<ActivityOptions>()(["id", "cacheFor", "retries", "backoff", "timeout", "errors"]);
/** Each activity's own (ActivityOptions documents which is whose); retries and the rest on another are refused by
 * checkActivityOptions first, with why. */
const OPTION_NAMES: Record<ActivitySpec["kind"], readonly string[]> = {
  startup: ACTIVITY_OPTIONS.filter((name) => name !== "cacheFor"),
  probe: ["id", "cacheFor"],
  cleanup: ["id"],
  login: ["id", "errors"], // errors: "permanent" alone (checkActivityOptions)
};

/** on.startup, on.cleanup, on.probe and on.login, recording into `store`. */
export function activitiesOn(store: { activities: ActivitySpec[] }) {
  const add = <F extends ActivityFn | LoginFn>(kind: ActivitySpec["kind"], fn: F, options: ActivityOptions): F => {
    if (typeof fn !== "function") throw new Error(`on.${kind}(...) needs a function`);
    // Not an object: refused as such before checkActivityOptions reads it.
    if (typeof options !== "object" || options === null) checkOptionNames(`on.${kind}`, options, OPTION_NAMES[kind]);
    const n = store.activities.filter((a) => a.kind === kind).length + 1;
    const id = options.id ?? (fn.name && fn.name !== "anonymous" ? fn.name : `${kind}#${n}`);
    checkActivityOptions(kind, id, options, store.activities);
    checkOptionNames(`on.${kind}`, options, OPTION_NAMES[kind]);
    store.activities.push({ id, kind, fn, options } as ActivitySpec);
    return fn;
  };
  return {
    startup: (fn: ActivityFn, options: ActivityOptions = {}) => add("startup", fn, options),
    cleanup: (fn: ActivityFn, options: ActivityOptions = {}) => add("cleanup", fn, options),
    probe: (fn: ActivityFn, options: ActivityOptions = {}) => add("probe", fn, options),
    login: (fn: LoginFn, options: ActivityOptions = {}) => add("login", fn, options),
  };
}
