// Runs one handler once: its timeout (counted from the first attempt, across restarts), its
// signal, and what its outcome means (Kopf's TemporaryError / PermanentError / `errors`).
// Must never write anything: it returns an outcome; cycle.ts records it.

import { clock, isAbortError, linkedSignal } from "../util/index.ts";
import { HandlerRetriesError, HandlerTimeoutError, PermanentError, TemporaryError } from "../declaring/index.ts";
import type { HandlerSpec } from "../declaring/index.ts";
import type { HandlerContext, HandlerFn } from "../declaring/index.ts";
import { apiOn } from "./api.ts";
import { lendSignal } from "./context.ts";

export interface HandlingDefaults {
  /** Most attempts; null = unlimited. */
  retries: number | null;
  /** Seconds. */
  backoff: number;
  /** Seconds; null = none. */
  timeout: number | null;
}

export type RunOutcome =
  | { kind: "success"; result: unknown; ignored?: Error }
  | { kind: "retry"; delay: number; error: Error }
  | { kind: "failure"; error: Error }
  /** Stopped by shutdown: nothing is recorded, the next operator runs it again. */
  | { kind: "aborted" };

/**
 * Runs `spec` with `ctx` (its `signal` becomes one of its own for this call, that also ends at the timeout).
 * `attempt` is the 0-based number of this attempt; `startedAt` the epoch ms of the first one.
 */
export async function runHandler(
  spec: HandlerSpec,
  ctx: HandlerContext,
  defaults: HandlingDefaults,
  parent: AbortSignal,
): Promise<RunOutcome> {
  const timeout = spec.options.timeout ?? defaults.timeout;
  const maxAttempts = spec.options.retries ?? defaults.retries;
  const backoff = spec.options.backoff ?? defaults.backoff;
  const startedAt = ctx.started.getTime();
  if (timeout !== null && timeout !== undefined && clock().now() - startedAt >= timeout * 1000) {
    return { kind: "failure", error: new HandlerTimeoutError(`handler ${spec.id} timed out after ${timeout}s`) };
  }
  // A timeout needs a signal of the handler's own now; otherwise one is made only if the handler reads it.
  const linked = timeout !== null && timeout !== undefined ? linkedSignal(parent) : undefined;
  if (linked) {
    ctx.signal = linked.signal;
    if (ctx.api) ctx.api = apiOn(ctx.api, linked.signal); // its requests and watches end with the timeout too
  }
  const release = linked ? linked.dispose : lendSignal(ctx, parent);
  let cancelTimer: (() => void) | undefined;
  let timedOut = false;
  try {
    let result: unknown = (spec.fn as HandlerFn)(ctx);
    if (result instanceof Promise) {
      if (timeout !== null && timeout !== undefined) {
        const left = timeout * 1000 - (clock().now() - startedAt);
        // A handler that ignores its signal is not waited for past its timeout; it is told to stop.
        const expiry = new Promise<never>((_, reject) => {
          cancelTimer = clock().timer(left, () => {
            timedOut = true;
            const error = new HandlerTimeoutError(`handler ${spec.id} timed out after ${timeout}s`);
            linked!.controller.abort(error);
            reject(error);
          });
        });
        result = await Promise.race([result, expiry]);
      } else result = await result;
    }
    if (timedOut) throw new HandlerTimeoutError(`handler ${spec.id} timed out after ${timeout}s`);
    return succeeded(spec, result);
  } catch (error) {
    if (timedOut) {
      return { kind: "failure", error: new HandlerTimeoutError(`handler ${spec.id} timed out after ${timeout}s`) };
    }
    return outcomeOfError(error, spec, ctx.retry, parent, backoff, maxAttempts);
  } finally {
    cancelTimer?.();
    release();
  }
}

/**
 * A success; but a result that JSON cannot hold (a cycle, a BigInt) would fail the object's whole write, every
 * handler of it then run again, under a message naming none: it fails this handler for good instead.
 */
function succeeded(spec: HandlerSpec, result: unknown): RunOutcome {
  // null is Kopf's None: no result, so status.<id> keeps what it had (a merge patch's null would delete it).
  if (result === undefined || result === null) return { kind: "success", result: undefined };
  try {
    JSON.stringify(result);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    const message = `handler ${spec.id} returned what cannot be stored at status.${spec.id} (JSON): ${why}`;
    return { kind: "failure", error: new PermanentError(message) };
  }
  return { kind: "success", result };
}

/**
 * What a handler's error means (not its timeout's): stopped by shutdown, or by the error's kind and the handler's
 * `errors` mode a failure, an ignored error, or a retry after a delay while attempts are left.
 */
function outcomeOfError(
  error: unknown, spec: HandlerSpec, retry: number, parent: AbortSignal, backoff: number,
  maxAttempts: number | null | undefined,
): RunOutcome {
  if (parent.aborted && (isAbortError(error) || error === parent.reason)) return { kind: "aborted" };
  const err = error instanceof Error ? error : new Error(String(error));
  if (err instanceof PermanentError) return { kind: "failure", error: err };
  let delay: number;
  if (err instanceof TemporaryError) delay = err.delay ?? backoff;
  else {
    const mode = spec.options.errors ?? "temporary";
    if (mode === "ignored") return { kind: "success", result: undefined, ignored: err };
    if (mode === "permanent") return { kind: "failure", error: err };
    delay = backoff;
  }
  if (maxAttempts !== null && maxAttempts !== undefined && retry + 1 >= maxAttempts) {
    const message = `handler ${spec.id} failed ${retry + 1} time(s): ${err.message}`;
    return { kind: "failure", error: new HandlerRetriesError(message) };
  }
  return { kind: "retry", delay, error: err };
}
