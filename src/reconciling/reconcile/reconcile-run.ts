// One call of an `on.reconcile` function and what its ending means, as pure as it can be: the
// context it gets (the object, the cache, a patch, `deleting`), its timeout, and the verdict:
// done, run again after a time it asked for, or failed (retried with backoff per object, as
// controller-runtime's default rate limiter: 5 ms doubling to 1,000 s, reset by a success; a
// TemporaryError's delay instead; a PermanentError not retried until the object changes).
// Which changes run it at all is `triggers` here too: the object's generation, labels,
// annotations, finalizers and deletion mark (`on: "generation"`), or every version (`on: "any"`).
// reconciler.ts runs it inside the object's cycle (its worker, ownership, finalizer and writes).

import type { KubeObject, Resource } from "../../kube/index.ts";
import { clock, linkedSignal, type Logger } from "../../util/index.ts";
import { PermanentError, TemporaryError, HandlerTimeoutError } from "../../declaring/index.ts";
import type { Cache, ReconcileContext, ReconcileSpec, Patch } from "../../declaring/index.ts";
import { compactPatch, newPatch, objectContext, type HandlerTools } from "../../handling/index.ts";
import { echoScoped, type EchoBooks } from "./echo-scope.ts";

/** The failure backoff, in ms: controller-runtime's default per-item exponential limiter. */
export interface ReconcileBackoff {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RECONCILE_BACKOFF: ReconcileBackoff = { baseMs: 5, maxMs: 1_000_000 };

export type ReconcileVerdict =
  /** Returned: `patch` to write, and when to run again if it asked (ms). */
  | { kind: "done"; patch: Record<string, any> | undefined; requeueMs?: number; seconds: number }
  /** Threw: run again after `delayMs` (a TemporaryError's delay, else the backoff); nothing is written. */
  | { kind: "retry"; error: Error; delayMs: number; seconds: number }
  /** Threw a PermanentError (or failed for good): not run again until the object changes. */
  | { kind: "failed"; error: Error; seconds: number }
  /** Stopped by shutdown, a freeze or the object's deletion: nothing is recorded. */
  | { kind: "aborted" };

export interface ReconcileCall {
  spec: ReconcileSpec;
  resource: Resource;
  body: KubeObject;
  memo: Record<string, any>;
  logger: Logger;
  tools: HandlerTools;
  cache: Cache;
  deleting: boolean;
  /** Failed calls in a row before this one. */
  retry: number;
  backoff: ReconcileBackoff;
  signal: AbortSignal;
  /** Told the answer to each write the function makes to its own object through ctx.api. */
  wrote?: (answer: KubeObject) => void;
  /** The owned resources' echoes: the call's blind writes wake no reconcile of its object (echo-scope.ts). */
  echoes?: EchoBooks | undefined;
}

/** Calls the function once under its timeout and tells what its ending means. */
export async function callReconcile(call: ReconcileCall): Promise<ReconcileVerdict> {
  const { spec, signal } = call;
  const linked = linkedSignal(signal);
  const ctx = contextOf(call, linked.signal);
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  let cancelTimer: (() => void) | undefined;
  try {
    let result = spec.fn(ctx);
    if (result instanceof Promise && spec.timeout !== undefined) {
      const limit = spec.timeout;
      const expiry = new Promise<never>((_, reject) => {
        cancelTimer = clock().timer(limit * 1000, () => {
          const error = new HandlerTimeoutError(`on.reconcile "${spec.id}" timed out after ${limit}s`);
          linked.controller.abort(error);
          reject(error);
        });
      });
      result = await Promise.race([result, expiry]);
    } else result = await result;
    // Ended after a freeze, a deletion or shutdown took the object: its plan is never written, so
    // nothing of it counts (not reconciled, not a failure, no Event): it runs again when ours again.
    if (signal.aborted) return { kind: "aborted" };
    return done(spec.id, compactPatch(ctx.patch), result, seconds());
  } catch (thrown) {
    if (signal.aborted) return { kind: "aborted" };
    const error = thrown instanceof Error ? thrown : new Error(String(thrown));
    // A timeout is a failure like any (a HandlerTimeoutError is permanent for Kopf-style handlers only).
    if (error instanceof PermanentError && !(error instanceof HandlerTimeoutError)) {
      return { kind: "failed", error, seconds: seconds() };
    }
    const delayMs = error instanceof TemporaryError && error.delay !== undefined
      ? error.delay * 1000
      : backoffMs(call.retry, call.backoff);
    return { kind: "retry", error, delayMs, seconds: seconds() };
  } finally {
    cancelTimer?.();
    linked.dispose();
  }
}

/** The wait after the `retry`-th failure in a row (0-based): base·2ⁿ, at most max. */
export function backoffMs(retry: number, backoff: ReconcileBackoff): number {
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(retry, 60));
}

/**
 * What of the object, once reconciled, makes it worth reconciling again: under "generation" its
 * generation, labels, annotations, finalizers and deletion mark (so a status write, ours or a
 * child controller's, does not run it); under "any", its version.
 */
export function triggers(body: KubeObject, on: ReconcileSpec["on"]): string {
  const m = body.metadata;
  // Objects without a generation (ConfigMaps, Secrets) change by their version alone.
  if (on === "any" || m.generation === undefined) return m.resourceVersion ?? "";
  return JSON.stringify([m.generation, m.labels, m.annotations, m.finalizers, m.deletionTimestamp ?? null]);
}

/**
 * Nothing returned: done. `{ requeueAfter }`: again after that many seconds, 0 or less meaning at once (as
 * kube-rs's `Action::requeue(Duration::ZERO)`; an explicit 0 here is no Go zero value meaning "unset").
 * Anything else is a bug of the function, thrown (so retried, with its warning) rather than taken as done.
 */
function done(id: string, patch: Record<string, any> | undefined, result: unknown, seconds: number): ReconcileVerdict {
  if (result === undefined || result === null) return { kind: "done", patch, seconds };
  // Only `requeueAfter`: controller-runtime's `{ requeue: true }` or a Kopf handler's `{ message }` is no result here.
  const plain = typeof result === "object" && !Array.isArray(result) &&
    Object.keys(result).every((key) => key === "requeueAfter");
  const requeue = plain ? (result as { requeueAfter?: unknown }).requeueAfter : NaN;
  // `{ requeueAfter: due ? 5 : undefined }`: no requeue asked, done.
  if (requeue === undefined) return { kind: "done", patch, seconds };
  if (typeof requeue !== "number" || !Number.isFinite(requeue)) {
    throw new TypeError(
      `on.reconcile "${id}" returned ${shown(result)}: return nothing (done) ` +
        "or { requeueAfter: seconds }, a finite number (0: again at once)",
    );
  }
  return { kind: "done", patch, requeueMs: Math.max(0, requeue) * 1000, seconds };
}

/** A returned value as the error shows it (node:util's inspect stays unloaded: otel-bundle.test.ts). */
function shown(value: unknown): string {
  const text = (v: unknown) => (typeof v === "string" ? JSON.stringify(v) : String(v));
  if (typeof value !== "object" || value === null) return text(value);
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === "requeueAfter") {
    return `{ requeueAfter: ${text((value as { requeueAfter: unknown }).requeueAfter)} }`;
  }
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function contextOf(call: ReconcileCall, signal: AbortSignal): ReconcileContext {
  const { body, resource, memo, logger, tools } = call;
  const base = objectContext(body, resource, memo, logger, signal, tools, undefined, call.wrote);
  const patch: Patch = newPatch(() => body);
  const uid = body.metadata.uid;
  const scoped = call.echoes && uid
    ? echoScoped({ ...base, cache: call.cache }, call.echoes, { uid, namespace: body.metadata.namespace })
    : { api: base.api, cache: call.cache };
  return { ...base, ...scoped, deleting: call.deleting, patch, retry: call.retry };
}
