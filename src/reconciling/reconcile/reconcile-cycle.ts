// One cycle of an object whose resource has an `on.reconcile`: the engine beside handling/'s
// Kopf-style cycle, planning the same way (a CyclePlan: what to write, the finalizer's change,
// when to run again) so that everything around it is shared: the worker per object, ownership
// and freezes, fenced writes, Events, metrics. kobun's finalizer is held when the reconcile says
// `finalizer: true` (or a daemon or timer holds it): added alone first, released after a
// reconcile that succeeds while deleting. An object whose triggers (reconcile-run.ts) are as
// they were at its last success is not reconciled again, unless something woke it (what it owns
// or watches, a retry: the reconciler clears `reconciled` then) or its requeue is due.

import type { KubeObject, Resource } from "../../kube/index.ts";
import { clock, inSpan, type Logger } from "../../util/index.ts";
import type { EventPoster } from "../../posting/index.ts";
import { deepEqual, type Cache, type ReconcileSpec } from "../../declaring/index.ts";
import { objectContext, type CyclePlan, type HandlerTools, type ObjectState } from "../../handling/index.ts";
import type { Background } from "../daemons/background.ts";
import { finalizerAction, hasFinalizer } from "../finalizer.ts";
import { callReconcile, triggers, type ReconcileBackoff, type ReconcileVerdict } from "./reconcile-run.ts";
import type { ReconcileObserver } from "../options.ts";
import type { EchoBooks } from "./echo-scope.ts";

/** What a resource's reconcile runs with. */
export interface ReconcileEnv {
  spec: ReconcileSpec;
  resource: Resource;
  logger: Logger;
  tools: HandlerTools;
  /** `ctx.cache` for an object of this namespace. */
  cache(namespace: string | undefined): Cache;
  backoff: ReconcileBackoff;
  observer?: ReconcileObserver | undefined;
  poster?: EventPoster | undefined;
  /**
   * The body a reconcile runs on is never staler than our own writes (`reconcile.readOwnWrites`): only then
   * may a part of its patch that changes nothing on that body be left unsent.
   */
  freshBodies?: boolean;
  /** The owned resources' echoes: a call's blind writes wake no reconcile of its object (echo-scope.ts). */
  echoes?: EchoBooks | undefined;
  /** Said once per resource: it has no status subresource, so observedGeneration is not set (withObserved). */
  saidNoStatusSubresource?: boolean;
}

/** What is kept of an object between its reconciles (in tracked.ts's one record). */
export interface ReconcileState extends ObjectState {
  /** Its triggers at the last reconcile that needs no repeat; undefined: reconcile it at the next cycle. */
  reconciled: string | undefined;
  /** Failed reconciles in a row. */
  failures: number;
  /** Woken (what it owns or watches changed) since its reconcile began: run it again whatever its triggers. */
  woken: boolean;
  /** When (handler time, ms) the `requeueAfter` its last reconcile asked for is due; undefined: none pending. */
  requeueAt: number | undefined;
}

export async function reconcileWithFinalizer(
  env: ReconcileEnv, state: ReconcileState, body: KubeObject, signal: AbortSignal,
  background: Pick<Background, "holds">, tools: HandlerTools = env.tools,
): Promise<CyclePlan> {
  const plan = emptyPlan();
  const deleting = Boolean(body.metadata.deletionTimestamp);
  // An object `when` refuses is left alone: no finalizer (ours is released if it has one).
  const accepted = accepts(env, state, body, signal);
  const needs = () => (env.spec.finalizer && accepted) || background.holds(body);
  const action = finalizerAction(deleting, hasFinalizer(body), needs);
  if (action === "add") return { ...plan, finalizer: "add", finalizerFirst: true };
  if (action === "release" || (action === "run-delete-handlers" && !accepted)) plan.finalizer = "remove";
  const key = triggers(body, env.spec.on);
  // Deleting without our finalizer, under finalizer: true: its cleanup ran (or it was never ours to hold).
  const cleanedUp = deleting && env.spec.finalizer && action === "nothing";
  if (!accepted || cleanedUp) {
    [state.reconciled, state.requeueAt] = [key, undefined];
    return plan;
  }
  // Its triggers as they were, nothing woke it: not now. An item that took the place of a pending
  // requeue (the echo of its own status write, say) keeps the requeue's time rather than running it early.
  const requeueIn = state.requeueAt === undefined ? 0 : state.requeueAt - clock().now();
  if (state.reconciled === key && !state.woken && (state.requeueAt === undefined || requeueIn > 0)) {
    if (requeueIn > 0) plan.delay = requeueIn;
    return plan;
  }
  state.woken = false; // a wake from now on runs it again
  state.running = `${env.spec.id} on ${body.metadata.namespace ?? ""}/${body.metadata.name}`;
  try {
    const verdict = await tracedCall(env.spec.id, state.failures, () => callReconcile({
      spec: env.spec, resource: env.resource, body, memo: state.memo, logger: env.logger, tools,
      cache: env.cache(body.metadata.namespace), retry: state.failures, backoff: env.backoff, signal,
      // ctx.deleting: a deletion kobun holds (its finalizer); one held only by others is just a state.
      deleting: action === "run-delete-handlers",
      wrote: (answer) => (plan.newest = answer.metadata.resourceVersion ?? plan.newest), echoes: env.echoes,
    }));
    report(env, body, verdict, state.failures);
    // A write of its own object during the call (ctx.api) made `body` older than the object: compare to nothing.
    const compared = env.freshBodies && plan.newest === undefined ? body : undefined;
    const ended = verdict.kind === "done" ? { ...verdict, patch: withObserved(env, verdict.patch, body) } : verdict;
    return planned(plan, ended, state, key, action === "run-delete-handlers", compared);
  } finally {
    state.running = undefined;
  }
}

/** The reconcile's `when`, if it has one, on the object's context. */
function accepts(env: ReconcileEnv, state: ReconcileState, body: KubeObject, signal: AbortSignal): boolean {
  const when = env.spec.when;
  return !when || when(objectContext(body, env.resource, state.memo, env.logger, signal, env.tools));
}

/** The plan a verdict comes to, and what the object's state keeps of it. */
function planned(
  plan: CyclePlan, verdict: ReconcileVerdict, state: ReconcileState, key: string, releasing: boolean,
  compared: KubeObject | undefined,
): CyclePlan {
  switch (verdict.kind) {
    case "aborted":
      return plan;
    case "done": {
      state.failures = 0;
      // Reconciled (until the plan turns out unwritten: reconciler.ts forgets the key then); a requeue
      // runs it again once due, whatever its triggers, and a change of them sooner.
      state.reconciled = key;
      state.requeueAt = verdict.requeueMs === undefined ? undefined : clock().now() + verdict.requeueMs;
      // Released once the cleanup is done; a requeue while deleting says it is not yet.
      if (releasing && verdict.requeueMs === undefined) return { ...plan, finalizer: "remove" };
      const user = compared ? changing(verdict.patch, compared) : verdict.patch;
      const requeue = verdict.requeueMs !== undefined ? { delay: verdict.requeueMs } : {};
      return { ...plan, ...(user ? { user } : {}), ...requeue };
    }
    case "retry":
      state.failures++;
      [state.reconciled, state.requeueAt] = [undefined, undefined];
      return { ...plan, error: verdict.error, delay: verdict.delayMs };
    case "failed":
      state.failures = 0;
      [state.reconciled, state.requeueAt] = [key, undefined]; // not retried until the object changes
      return { ...plan, error: verdict.error };
  }
}

/**
 * `status.observedGeneration` beside any status the reconcile writes. Not without a status subresource: the API
 * server then moves the generation on every status write, so the generation written is stale once written, and
 * writing the next one ran the reconcile again, forever. Such a resource is named once.
 */
function withObserved(
  env: ReconcileEnv, patch: Record<string, any> | undefined, body: KubeObject,
): Record<string, any> | undefined {
  const generation = body.metadata.generation;
  if (!patch?.status || generation === undefined) return patch;
  if (env.resource.statusSubresource) return { ...patch, status: { ...patch.status, observedGeneration: generation } };
  if (!env.saidNoStatusSubresource) {
    env.saidNoStatusSubresource = true;
    const { plural, group } = env.resource;
    env.logger.warn(
      `${group ? `${plural}.${group}` : plural} has no status subresource: each status write changes its ` +
        "metadata.generation, which runs the reconcile once more, and status.observedGeneration is not set " +
        "(it could never equal the generation); declare subresources: { status: {} } in its CRD",
      { reconcile: env.spec.id },
    );
  }
  return patch;
}

/**
 * The reconcile's patch without the parts (status, metadata, spec) that would change nothing on `body`, the object
 * it ran on (used only when that is never staler than our own writes and the call wrote no version of it): a
 * level-triggered reconcile writes the same status again and again, and each such write is a request, and a new
 * resourceVersion for every watcher, for nothing.
 */
function changing(patch: Record<string, any> | undefined, body: KubeObject): Record<string, any> | undefined {
  if (!patch) return undefined;
  const kept: Record<string, any> = {};
  const before = body as Record<string, any>;
  for (const key in patch) {
    if (patch[key] !== undefined && mergeChanges(patch[key], before[key])) kept[key] = patch[key];
  }
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** Whether merge-patching `target` with `patch` changes it (RFC 7386: null removes, objects merge, else replaces). */
function mergeChanges(patch: unknown, target: unknown): boolean {
  if (!isRecord(patch)) return patch === null ? target !== undefined : !deepEqual(patch, target);
  if (!isRecord(target)) return true;
  for (const key in patch) {
    const value = patch[key];
    if (value !== undefined && mergeChanges(value, target[key])) return true;
  }
  return false;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Logs the ending (failures as warnings and errors, with an Event on the object), counts the run. */
function report(env: ReconcileEnv, body: KubeObject, verdict: ReconcileVerdict, retry: number): void {
  if (verdict.kind === "aborted") return;
  const outcome = verdict.kind === "done" ? "success" : verdict.kind === "retry" ? "retry" : "failure";
  env.observer?.handlerRan(env.spec.id, "reconcile", outcome, verdict.seconds);
  const at = { namespace: body.metadata.namespace, name: body.metadata.name, reconcile: env.spec.id };
  if (verdict.kind === "done") {
    // A requeue shows in the line: a test (or a reader) tells "again in 10s" from "done" without counting runs.
    const again = verdict.requeueMs !== undefined ? { requeueAfter: seconds(verdict.requeueMs) } : {};
    if (env.logger.enabled("debug")) env.logger.debug("Reconciled.", { ...at, ...again });
  } else if (verdict.kind === "retry") {
    const failed = `Reconcile '${env.spec.id}' failed`;
    env.logger.warn(`${failed}; retrying in ${seconds(verdict.delayMs)}: ${verdict.error.message}`,
      { ...at, retry, error: verdict.error });
    // No delay in the Event: the same failure again is then counted into one Event (count: N).
    env.poster?.post(body, "Warning", "Reconcile", `${failed}: ${verdict.error.message}`, "warn");
  } else {
    env.observer?.terminalError();
    const message = `Reconcile '${env.spec.id}' failed permanently: ${verdict.error.message}`;
    env.logger.error(message, { ...at, error: verdict.error });
    env.poster?.post(body, "Warning", "Reconcile", message, "error");
  }
}

/** The call as a span of its own under the cycle's (`reconcile <id>`), when tracing is on. */
function tracedCall(id: string, retry: number, call: () => Promise<ReconcileVerdict>): Promise<ReconcileVerdict> {
  return inSpan(`reconcile ${id}`, { "kobun.reconcile": id, "kobun.retry": retry }, false, async (span) => {
    const verdict = await call();
    span?.setAttributes({ "kobun.outcome": verdict.kind });
    if (verdict.kind === "retry" || verdict.kind === "failed") span?.fail();
    return verdict;
  });
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${Math.round(ms / 100) / 10}s`;
}

function emptyPlan(): CyclePlan {
  return {
    cause: "reconcile", user: undefined, results: {}, bookkeeping: { progress: new Map() },
    finalizer: undefined, finalizerFirst: false, delay: undefined, runs: [], essence: undefined,
  };
}
