// One call of a daemon or a timer on one object, as background.ts's loop makes it: the context
// the call gets, how it ended as background-phases.ts's transitions take it (returned, retry
// after a delay, failed for good, aborted), and a timer's patch and result, written after it.
// Apart from the loop, which decides when to call and when to stop.

import type { KubeObject, Resource } from "../../kube/index.ts";
import { isNotFound } from "../../kube/index.ts";
import { clock, type Logger } from "../../util/index.ts";
import { compactPatch, newPatch, objectContext, runHandler, type HandlerTools } from "../../handling/index.ts";
import { PermanentError, TemporaryError } from "../../declaring/index.ts";
import type { BackgroundSpec, DaemonFn, HandlerContext, HandlerSpec, TimerContext } from "../../declaring/index.ts";
import { isOtherObject, type PatchClient } from "../fence.ts";
import { writeTimerResults } from "./timer-results.ts";
import { DEFAULT_BACKOFF_S, retryDelay, type BackgroundPhase, type RunEnd } from "./background-phases.ts";

/** What a call needs of the Background's options. */
export interface CallOptions {
  resource: Resource;
  client: PatchClient;
  logger: Logger;
  tools: HandlerTools;
  /** The memo shared with the object's handlers. */
  memo(uid: string, namespace: string | undefined): Record<string, any>;
  /**
   * The shortest retry delay, ms: the workers' batch window, which paces a handler's retries
   * (an object is handled at most once per window), so `TemporaryError(0)` in a timer or a
   * daemon retries at a handler's pace, not as fast as the event loop turns.
   */
  retryFloorMs?: number;
}

/** One daemon or timer on one object. */
export interface Run {
  spec: BackgroundSpec;
  phase: BackgroundPhase;
  stop: AbortController;
  signal: AbortSignal;
  /** The newest body known (a timer call sees it; a daemon sees the body it started with). */
  body: KubeObject;
  /** When the object's essence last changed (for `idle`), and that essence. */
  changedAt: number;
  essence: unknown;
  /** Resolves when the loop ended, or it was abandoned. */
  ended: Promise<void>;
  /** Sharding: is the shard still this run's to write for (asked before a timer writes)? */
  current?(): boolean;
}

export async function callDaemon(options: CallOptions, uid: string, run: Run, retry: number): Promise<RunEnd> {
  const { spec } = run;
  const ctx = { ...contextOf(options, uid, run), retry };
  try {
    await (spec.fn as DaemonFn)(ctx);
    return { kind: "returned" };
  } catch (error) {
    if (run.signal.aborted) return { kind: "aborted" };
    const log = loggerOf(options, run);
    if (error instanceof PermanentError) {
      log.error("daemon failed permanently; not restarted", { error });
      return { kind: "permanent" };
    }
    const delayMs = paced(options, retryDelay(spec, error instanceof TemporaryError ? error.delay : undefined));
    log.error("daemon failed; restarting after its backoff", { error, retryInMs: delayMs });
    return { kind: "retry", delayMs };
  }
}

export async function callTimer(options: CallOptions, uid: string, run: Run, retry: number): Promise<RunEnd> {
  const { spec } = run;
  const patch = newPatch();
  let newest: string | undefined; // the version its own writes to the object returned: /status is fenced by it
  const context = contextOf(options, uid, run, (after) => (newest = after.metadata.resourceVersion));
  const ctx: TimerContext = { ...context, patch, retry, started: new Date(clock().now()) };
  const backoff = spec.options.backoff ?? DEFAULT_BACKOFF_S;
  // The handler rules (TemporaryError, PermanentError, `errors`, `retries`) are runner.ts's.
  const rules = { retries: null, backoff, timeout: null };
  const outcome = await runHandler(spec as unknown as HandlerSpec, ctx as unknown as HandlerContext, rules, run.signal);
  if (run.signal.aborted || outcome.kind === "aborted") return { kind: "aborted" };
  const log = loggerOf(options, run);
  if (outcome.kind === "retry") {
    const delayMs = paced(options, outcome.delay * 1000);
    log.error("timer failed; retrying", { error: outcome.error, retryInMs: delayMs });
    return { kind: "retry", delayMs };
  }
  if (outcome.kind === "failure") log.error("timer failed; next call at its interval", { error: outcome.error });
  const result = outcome.kind === "success" ? outcome.result : undefined;
  // A lease that lapsed while this process stalled is given up now (its signal aborts), as a
  // cycle's is before it writes: another replica may run this timer by now (holds.ts).
  run.current?.();
  if (run.signal.aborted) return { kind: "aborted" };
  await write(options, run, compactPatch(patch), result, newest);
  return { kind: "returned" };
}

async function write(
  options: CallOptions, run: Run, user: Record<string, any> | undefined, result: unknown, newest: string | undefined,
): Promise<void> {
  const { resource, client } = options;
  try {
    const { body, signal } = run;
    await writeTimerResults({ client, resource, body, id: run.spec.id, user, result, newest, signal });
  } catch (error) {
    if (run.signal.aborted || isNotFound(error) || isOtherObject(error)) return;
    loggerOf(options, run).error("could not write the timer's results", { error });
  }
}

/**
 * A daemon's or timer's context. Its own writes to the object are not taken in: no last-handled state is stored
 * for them.
 */
function contextOf(options: CallOptions, uid: string, run: Run, wrote?: (after: KubeObject) => void) {
  const { resource, tools } = options;
  const memo = options.memo(uid, run.body.metadata.namespace);
  return objectContext(run.body, resource, memo, loggerOf(options, run), run.signal, tools, undefined, wrote);
}

function paced(options: CallOptions, delayMs: number): number {
  return Math.max(delayMs, options.retryFloorMs ?? 0);
}

function loggerOf(options: CallOptions, run: Run): Logger {
  const { namespace, name } = run.body.metadata;
  return options.logger.child({ namespace, name, [run.spec.kind]: run.spec.id });
}
