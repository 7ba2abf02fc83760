// The shapes of operator-wide handlers (on.startup, on.cleanup, on.probe, on.login): no
// object, the operator's memo. No behaviour here; types.ts re-exports them.

import type { LoginResult } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import type { Api } from "./api.ts";
import type { EventRecorder } from "./types.ts";

/** What on.startup and on.cleanup see: no object, the operator's memo, its API client. */
export interface ActivityContext {
  /** Shared with every handler: each object's memo starts as a shallow copy of it. */
  memo: Record<string, any>;
  logger: Logger;
  /** Aborts at shutdown (startup), or at the end of the shutdown grace period (cleanup). */
  signal: AbortSignal;
  api: Api;
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

/** Options of `on.startup`, `on.cleanup` and `on.probe`. */
export interface ActivityOptions {
  /** Names it in logs and errors (and a probe's value in /healthz). Default: the function name. */
  id?: string;
  /** on.probe: seconds a value is reused before fn is asked again. Default 10. */
  cacheFor?: number;
}
