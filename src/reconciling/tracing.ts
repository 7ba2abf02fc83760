// What a handling cycle tells the tracer (util/trace.ts), when tracing is on: the cycle is the
// root span of its trace (the handlers' and the requests' spans are its children); what it
// learns on the way (the cause, the handlers that ran, the outcome) lands on that span. And what
// it tells the metrics' observer (measuredCycle): that it began, how it ended, how long it took.
// Names, ids and outcomes only: never the object's content.

import { resourceName, type KubeObject, type Resource } from "../kube/index.ts";
import { activeSpan, inSpan } from "../util/index.ts";
import type { CyclePlan } from "../handling/index.ts";
import type { Outcome } from "./life.ts";
import type { ReconcileObserver } from "./options.ts";

/** Runs one object's cycle as the root span `cycle <plural.group>`. */
export function tracedCycle<T>(
  resource: Resource, uid: string, event: { type: string; object: KubeObject }, cycle: () => Promise<T>,
): Promise<T> {
  const { namespace, name } = event.object.metadata;
  const controller = resourceName(resource);
  const attributes = {
    "kobun.resource": controller, "k8s.namespace.name": namespace ?? "", "kobun.object.name": name ?? "",
    "kobun.object.uid": uid, "kobun.event": event.type,
  };
  return inSpan(`cycle ${controller}`, attributes, true, cycle);
}

/** The cause and the handlers that ran, once the engine planned the cycle. */
export function notePlan(plan: CyclePlan): void {
  activeSpan()?.setAttributes({ "kobun.cause": plan.cause, "kobun.handlers": plan.runs.map((run) => run.spec.id) });
}

/** How the cycle ended (life.ts's outcome kinds); a failed write fails the span. */
export function noteOutcome(outcome: Outcome): void {
  const span = activeSpan();
  if (!span) return;
  span.setAttributes({ "kobun.outcome": outcome.kind });
  if (outcome.kind === "failed") span.fail();
}

/** Runs one object's cycle for the observer: began, then its result (`failed()`: it erred) and how long it took. */
export async function measuredCycle<T extends { again?: number } | void>(
  observer: ReconcileObserver, failed: () => boolean, cycle: () => Promise<T>,
): Promise<T> {
  const began = performance.now();
  observer.began();
  let result: T | undefined = undefined;
  try {
    return (result = await cycle());
  } finally {
    const again = result ? result.again : undefined;
    const kind = failed() ? "error" : again === undefined ? "success" : again > 0 ? "requeue_after" : "requeue";
    observer.reconciled(kind, (performance.now() - began) / 1000);
  }
}
