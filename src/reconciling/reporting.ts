// What the reconciler tells about a cycle, and the on.event handlers it runs beside it:
// one log line per handler run, its counter, and an Event on the object (kubectl describe);
// and the cycles that went wrong: failed writes, results discarded by a freeze, handlers abandoned.

import type { KubeObject, Resource } from "../kube/index.ts";
import type { EventPoster } from "../posting/index.ts";
import type { Logger } from "../util/index.ts";
import type { WatchEvent } from "../watching/index.ts";
import { lendSignal, objectContext, type HandlerTools } from "../handling/index.ts";
import { causeTitle, type CyclePlan } from "../handling/index.ts";
import { objectFiltersPass } from "../handling/index.ts";
import type { Cause, HandlerSpec, ObjectFilters } from "../declaring/index.ts";
import type { EventContext, EventHandlerFn } from "../declaring/index.ts";
import type { Outcome } from "./life.ts";
import type { ReconcileObserver } from "./options.ts";

/** An object event: what reaches an object's worker (relist markers do not). */
/** One object's event for its worker; `wake`: an on.reconcile woken by what it owns or watches. */
export type Item = Exclude<WatchEvent, { type: "relist-start" } | { type: "relist-done" }> & { wake?: true };

/** Where a resource's handler runs are told, and its on.event handlers. */
export interface Audience {
  resource: Resource;
  logger: Logger;
  poster: EventPoster | undefined;
  observer: ReconcileObserver | undefined;
  events: readonly HandlerSpec[];
  /** What handlers get as ctx.api and ctx.event. */
  tools?: HandlerTools;
}

/** Runs the on.event handlers of one event, in order; their failures are logged, never retried. */
export async function runEventHandlers(
  to: Audience, item: Item, memo: Record<string, any>, signal: AbortSignal,
): Promise<void> {
  const body = item.object;
  const base = objectContext(body, to.resource, memo, to.logger, signal, to.tools);
  for (const spec of to.events) {
    let ctx: EventContext | undefined;
    const make = (): EventContext => (ctx ??= {
      ...base, type: item.type,
      logger: base.logger.child({ namespace: base.namespace, name: base.name, handler: spec.id }),
    });
    let endLending: (() => void) | undefined;
    try {
      if (!objectFiltersPass(spec as unknown as EventFilters, body, make, signal)) continue;
      // The cycle's signal is shared by many cycles: the handler's listeners go on one of its own.
      endLending = lendSignal(make(), signal);
      await (spec.fn as EventHandlerFn)(make());
      // Kopf's line (its e2e counts them); logged only, never posted as an Event: it comes with every event.
      const { namespace, name } = base;
      to.logger.info(`Handler '${spec.id}' succeeded.`, { namespace, name, handler: spec.id });
    } catch (error) {
      make().logger.error("event handler failed (event handlers are not retried)", { error });
    } finally {
      endLending?.();
    }
  }
}

/** An on.event handler's filters, as objectFiltersPass reads them. */
type EventFilters = { options: ObjectFilters<EventContext>; field?: string[] };

/** Logs and posts the outcome of every handler that ran. */
export function reportRuns(to: Audience, body: KubeObject, plan: CyclePlan): void {
  for (const { spec, outcome, retry, seconds } of plan.runs) {
    to.observer?.handlerRan(spec.id, plan.cause, outcome.kind, seconds);
    if (outcome.kind === "success") {
      const message = `Handler '${spec.id}' succeeded.`;
      if (outcome.ignored) {
        const fields = { ...runFields(body, spec, plan), error: outcome.ignored };
        to.logger.warn(`Handler '${spec.id}' failed; the error is ignored.`, fields);
      } else if (to.logger.enabled("info")) {
        to.logger.info(message, runFields(body, spec, plan)); // a success's fields only when its line is written
      }
      to.poster?.post(body, "Normal", "Logging", message, "info");
    } else if (outcome.kind === "retry") {
      const message = `Handler '${spec.id}' failed temporarily: ${outcome.error.message}`;
      to.logger.warn(message, { ...runFields(body, spec, plan), retry, retryIn: outcome.delay });
      to.poster?.post(body, "Warning", "Logging", message, "warn");
    } else if (outcome.kind === "failure") {
      const message = `Handler '${spec.id}' failed permanently: ${outcome.error.message}`;
      to.logger.error(message, { ...runFields(body, spec, plan), retry });
      to.poster?.post(body, "Warning", "Logging", message, "error");
    }
  }
  if (plan.cause === "reconcile") return;
  // Kopf's lines: its summary of a completed cause (logged only, not posted as an Event), its finalizer's steps.
  const { tally, cause } = plan;
  const { namespace, name } = body.metadata;
  if (plan.done && tally && isCause(cause) && to.logger.enabled("info")) {
    const line = `${causeTitle(cause)} is processed: ${tally.succeeded} succeeded; ${tally.failed} failed.`;
    to.logger.info(line, { namespace, name });
  }
  if (plan.finalizer && to.logger.enabled("debug")) {
    // Released while deleting: the delete handlers are done, or a daemon or timer alone held it.
    const line = plan.finalizer === "add" ? ADDING : body.metadata.deletionTimestamp ? RELEASING : UNNEEDED;
    to.logger.debug(line, { namespace, name });
  }
}

// Kopf's debug lines for its finalizer (its e2e looks for the first).
const ADDING = "Adding the finalizer, thus preventing the actual deletion.";
const UNNEEDED = "Removing the finalizer, as there are no handlers requiring it.";
const RELEASING = "Removing the finalizer, thus allowing the actual deletion.";

const isCause = (cause: CyclePlan["cause"]): cause is Cause =>
  cause !== "noop" && cause !== "free" && cause !== "reconcile";

/** The watch told an object's deletion (Kopf's line, for a resource handled by cause). */
export function reportDeleted(to: Audience, body: KubeObject): void {
  if (!to.logger.enabled("debug")) return;
  const { namespace, name } = body.metadata;
  to.logger.debug("Deleted, really deleted, and we are notified.", { namespace, name });
}

/** The fields of a handler run's log line. */
function runFields(body: KubeObject, spec: HandlerSpec, plan: CyclePlan): Record<string, unknown> {
  return { namespace: body.metadata.namespace, name: body.metadata.name, handler: spec.id, cause: plan.cause };
}

/** A cycle that could not be written: logged, counted, and posted on the object; it will retry in `again` ms. */
export function reportFailure(to: Audience, body: KubeObject, error: unknown, again: number): void {
  to.logger.error("could not process the object; will retry", {
    namespace: body.metadata.namespace, name: body.metadata.name, error, retryInMs: again,
  });
  to.observer?.writeFailed();
  // Visible where people look (kubectl describe), not only in the operator's log; the
  // backoff (up to a minute) bounds how often.
  const reason = error instanceof Error ? error.message : String(error);
  const note = `Could not write the handlers' results: ${reason}; retrying in ${Math.round(again / 1000)}s.`;
  to.poster?.post(body, "Warning", "Error", note, "error");
}

/** A cycle whose object was taken from us (a freeze, a handover): its results are not written. */
export function reportDiscarded(to: Audience, body: KubeObject, plan?: CyclePlan): Outcome {
  const ran = plan?.runs.map((r) => r.spec.id).join(",");
  const { namespace, name } = body.metadata;
  to.logger.debug("frozen: the cycle's results are not written", { namespace, name, ...(ran ? { ran } : {}) });
  return { kind: "lost" };
}

/**
 * The object was deleted (seen, or a fenced write's 404/409): nothing of it is written, and its memory goes with its
 * deletion.
 */
export function reportGone(to: Audience, body: KubeObject): Outcome {
  const { namespace, name, uid } = body.metadata;
  to.logger.debug("the object is gone: nothing written for it", { namespace, name, uid });
  return { kind: "gone" };
}

/** A handler that ignored the freeze past its grace period: left behind, nothing written for it. */
export function reportAbandoned(to: Audience, running: string | undefined, body: KubeObject, graceMs: number): void {
  to.logger.warn("abandoned a handler that ignored the freeze past the grace period; nothing is written for it", {
    handler: running ?? "(none: the cycle was writing)", namespace: body.metadata.namespace, name: body.metadata.name,
    gracePeriodMs: graceMs,
  });
  to.observer?.handlerAbandoned();
}
