// The operator's activities (`on.login`, `on.startup`, `on.cleanup`, `on.probe`): login before
// anything connects (and again when its credentials must be renewed: kube/login.ts); startup
// and cleanup run once, around the rest; probes are asked when /healthz is (cached).
// Login handlers are asked in registration order; the first to return credentials wins. One
// that throws, or none returning any, stops the operator at start-up with exit code 6.
// Startup handlers run before any watch is opened, in registration order, each retried by the
// handler rules (TemporaryError, PermanentError, `errors`, `retries`, `backoff`, `timeout`: Kopf's
// 13-hooks) before the next starts; one that fails for good is a StartupError naming it (runtime/
// stops the operator with exit code 6, `startup`).
// Cleanup handlers run after the watchers and the handlers have stopped, bounded by the
// shutdown grace period; a failure there is logged, and the others still run. Both share `memo`
// with every handler (each object's memo starts as a shallow copy of it).

import type { Api } from "../declaring/index.ts";
import { eventRecorder, NO_EVENTS, runHandler } from "../handling/index.ts";
import type { ApiClient, HandlerTools, HandlingDefaults } from "../handling/index.ts";
import type { HandlerContext, HandlerSpec, Index } from "../declaring/index.ts";
import type { ActivitySpec, Registry } from "../declaring/index.ts";
import type { ActivityContext, LoginContext } from "../declaring/index.ts";
import { LoginError, type Login, type LoginResult } from "../kube/index.ts";
import type { Resource } from "../kube/index.ts";
import { clock, linkedSignal, onAbort } from "../util/index.ts";
import type { Logger } from "../util/index.ts";

export interface ActivityWiring {
  registry: Registry;
  logger: Logger;
  api: ApiClient;
  memo: Record<string, any>;
  /** The operator's indexes (ctx.indexes); none when there are no on.index handlers. */
  indexes?: Readonly<Record<string, Index>>;
  /** ctx.event's (each call names its object: an activity handles none). */
  poster?: HandlerTools["poster"];
}

// ctx.api for code that handles no object: bound to a resource that matches nothing, so no
// write is ever folded into a handler's patch.
const NO_OBJECT: Resource = {
  group: "", version: "", plural: "", kind: "", namespaced: false, statusSubresource: false,
};

type Kind = ActivitySpec["kind"];
type SpecOf<K extends Kind> =
  K extends "login" ? Extract<ActivitySpec, { kind: "login" }> : Exclude<ActivitySpec, { kind: "login" }>;

function specsOf<K extends Kind>(registry: Registry, kind: K): SpecOf<K>[] {
  return registry.activities.filter((a): a is SpecOf<K> => a.kind === kind);
}

/**
 * The on.login handlers as one Login (undefined when there are none): each asked in turn until
 * one returns credentials. A throw, or no credentials from any, is a LoginError naming them.
 * One login (all its handlers) is bounded by `timeoutMs` (0 = never): a hung renewal would
 * otherwise hold every request and watch, since they wait for credentials before their own
 * deadline starts. The handler's signal aborts then, and the login fails naming the handler.
 */
export function loginOf(w: Omit<ActivityWiring, "api">, signal: AbortSignal, timeoutMs = 0): Login | undefined {
  const specs = specsOf(w.registry, "login");
  if (!specs.length) return undefined;
  return async (renewal) => {
    const bound = linkedSignal(signal, timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined);
    try {
      for (const spec of specs) {
        const ctx = { memo: w.memo, logger: w.logger.child({ login: spec.id }), signal: bound.signal, renewal };
        const result = await askLogin(spec, ctx, signal, timeoutMs);
        if (result !== undefined && result !== null) {
          ctx.logger.info(`Activity '${spec.id}' succeeded.`);
          return result;
        }
      }
    } finally {
      bound.dispose();
    }
    throw new LoginError(`no login handler returned credentials (${specs.map((s) => s.id).join(", ")}): ` +
      "return { server, token } or { server, clientCertificate, clientKey }, or a kubeconfig");
  };
}

/**
 * One login handler's answer; it fails once ctx.signal aborts (shutdown or the bound), even if
 * the handler ignores it.
 */
async function askLogin(
  spec: SpecOf<"login">, ctx: LoginContext, shutdown: AbortSignal, timeoutMs: number,
): Promise<LoginResult | undefined | null | void> {
  const late = `login handler ${spec.id} did not return credentials within ${timeoutMs} ms (kube.requestTimeout)`;
  const abandon = () => (shutdown.aborted ? shutdown.reason : new LoginError(late));
  if (ctx.signal.aborted) throw abandon();
  let forget = () => {};
  const abandoned = new Promise<never>((_, reject) => {
    forget = onAbort(ctx.signal, () => reject(new Abandoned(abandon())));
  });
  try {
    return await Promise.race([Promise.resolve().then(() => spec.fn(ctx)), abandoned]);
  } catch (error) {
    if (error instanceof Abandoned) throw error.reason;
    const reason = error instanceof Error ? error.message : String(error);
    throw new LoginError(`login handler ${spec.id} failed: ${reason}`, { cause: error });
  } finally {
    forget();
  }
}

/** Tells the login's own abandonment apart from whatever the handler throws. */
class Abandoned {
  constructor(readonly reason: unknown) {}
}

function contextOf(
  spec: ActivitySpec, w: ActivityWiring, signal: AbortSignal, retry = 0, started = new Date(),
): ActivityContext {
  const api: Api = w.api.bind({ resource: NO_OBJECT, body: { metadata: {} } as never }, signal);
  const logger = w.logger.child({ [spec.kind]: spec.id });
  const event = w.poster ? eventRecorder(w.poster) : NO_EVENTS;
  return { memo: w.memo, logger, signal, api, indexes: w.indexes ?? NO_INDEXES, retry, started, event };
}

const NO_INDEXES: Readonly<Record<string, Index>> = Object.freeze({});

/**
 * A startup handler failed: the operator must not start. runtime/ turns it into its FatalError
 * (exit 6), as it does kube/'s LoginError: exit codes are the runtime's, not the engine's.
 */
export class StartupError extends Error {
  override readonly name = "StartupError";
}

/**
 * Runs the startup handlers in order, each until it succeeds; throws a StartupError at the first that fails for
 * good. `defaults` are the handlers' (handling.retries, backoff, timeout), for the options a handler leaves out.
 */
export async function runStartup(
  w: ActivityWiring, signal: AbortSignal, defaults: HandlingDefaults, graceMs: number,
): Promise<{ abandoned: string[] }> {
  for (const spec of specsOf(w.registry, "startup")) {
    const started = await startUp(spec, w, signal, defaults, graceMs);
    if (started !== true) return { abandoned: started === ABANDONED ? [`startup ${spec.id}`] : [] };
  }
  return { abandoned: [] };
}

const ABANDONED = Symbol("abandoned");

/** One startup handler, retried as a handler is; false when the operator stopped meanwhile. */
async function startUp(
  spec: SpecOf<"startup">, w: ActivityWiring, signal: AbortSignal, defaults: HandlingDefaults, graceMs: number,
): Promise<boolean | typeof ABANDONED> {
  const started = new Date();
  for (let retry = 0; !signal.aborted; retry++) {
    const ctx = contextOf(spec, w, signal, retry, started);
    const asHandler = spec as unknown as HandlerSpec; // the handler rules read only id, fn and options
    const outcome = await withinGrace(runHandler(asHandler, ctx as unknown as HandlerContext, defaults, signal),
      signal, graceMs);
    if (outcome === ABANDONED) {
      const task = `startup ${spec.id}`;
      w.logger.warn("abandoned a task that ignored the stop signal past the grace period", { task });
      return ABANDONED;
    }
    if (signal.aborted || outcome.kind === "aborted") return false;
    if (outcome.kind === "success") {
      if (outcome.ignored) ctx.logger.warn("startup handler failed; the error is ignored", { error: outcome.ignored });
      ctx.logger.info(`Activity '${spec.id}' succeeded.`);
      return true;
    }
    if (outcome.kind === "failure") {
      throw new StartupError(`startup handler ${spec.id} failed: ${outcome.error.message}`, { cause: outcome.error });
    }
    ctx.logger.error("startup handler failed; retrying", { error: outcome.error, retryInS: outcome.delay, retry });
    // handler time, as a handler's own sleep(): a test's virtual clock (simulate's too) moves it
    if (!(await clock().sleep(outcome.delay * 1000, signal))) return false;
  }
  return false;
}

/**
 * `work`'s outcome, or ABANDONED once `graceMs` have passed since `signal` aborted: a startup handler that ignores
 * its signal must not hold a stop past the grace period (a stop came only by SIGKILL), as no handler can.
 */
async function withinGrace<T>(work: Promise<T>, signal: AbortSignal, graceMs: number): Promise<T | typeof ABANDONED> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let forget = () => {};
  const late = new Promise<typeof ABANDONED>((resolve) => {
    const arm = () => void (timer = setTimeout(() => resolve(ABANDONED), graceMs));
    if (signal.aborted) arm();
    else forget = onAbort(signal, arm);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
    forget();
  }
}

/** Runs the cleanup handlers in order within `graceMs`; failures are logged, never thrown. */
export async function runCleanup(w: ActivityWiring, graceMs: number): Promise<void> {
  const specs = specsOf(w.registry, "cleanup");
  if (!specs.length) return;
  const deadline = linkedSignal(AbortSignal.timeout(graceMs));
  try {
    for (const spec of specs) {
      if (deadline.signal.aborted) {
        w.logger.warn("cleanup handler not run: the shutdown grace period is over", { cleanup: spec.id });
        continue;
      }
      const running = Promise.resolve().then(() => spec.fn(contextOf(spec, w, deadline.signal)));
      const expired = new Promise<"expired">((resolve) =>
        deadline.signal.addEventListener("abort", () => resolve("expired"), { once: true }));
      try {
        if ((await Promise.race([running, expired])) === "expired") {
          w.logger.warn("abandoned a cleanup handler past the shutdown grace period", { cleanup: spec.id });
        } else w.logger.info(`Activity '${spec.id}' succeeded.`, { cleanup: spec.id });
      } catch (error) {
        w.logger.error("cleanup handler failed", { cleanup: spec.id, error });
      }
    }
  } finally {
    deadline.dispose();
  }
}

const PROBE_TIMEOUT_MS = 5000;
const DEFAULT_CACHE_S = 10;

/**
 * The on.probe values for /healthz, each reused for its `cacheFor`: a probe that throws (or
 * takes longer than 5 s) reports `{ error }` instead, and never makes the operator unhealthy.
 */
export function probeValues(w: ActivityWiring): (() => Promise<Record<string, unknown>>) | undefined {
  const specs = specsOf(w.registry, "probe");
  if (!specs.length) return undefined;
  const cache = new Map<ActivitySpec, { at: number; value: Promise<unknown> }>();
  const valueOf = (spec: SpecOf<"probe">): Promise<unknown> => {
    const cached = cache.get(spec);
    if (cached && Date.now() - cached.at < (spec.options.cacheFor ?? DEFAULT_CACHE_S) * 1000) return cached.value;
    const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
    const expired = new Promise<never>((_, reject) => signal.addEventListener("abort", () =>
      reject(new Error(`no value within ${PROBE_TIMEOUT_MS} ms`)), { once: true }));
    const ctx = contextOf(spec, w, signal);
    const value = Promise.race([Promise.resolve().then(() => spec.fn(ctx)), expired])
      // Asked at every /healthz (past its cache): its success is a debug line, not Kopf's info.
      .then((v) => (ctx.logger.debug(`Activity '${spec.id}' succeeded.`), v))
      .catch((error) => ({ error: error instanceof Error ? error.message : String(error) }));
    cache.set(spec, { at: Date.now(), value });
    return value;
  };
  return async () =>
    Object.fromEntries(await Promise.all(specs.map(async (spec) => [spec.id, await valueOf(spec)] as const)));
}
