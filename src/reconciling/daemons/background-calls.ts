// One call of a daemon or a timer on one object, as background.ts's loop makes it: the context
// the call gets, how it ended as background-phases.ts's transitions take it (returned, retry
// after a delay, failed for good, aborted), and a timer's patch and result, written after it.
// Apart from the loop, which decides when to call and when to stop.

import type { KubeObject, Resource } from "../../kube/index.ts";
import { isNotFound } from "../../kube/index.ts";
import { clock, type Logger } from "../../util/index.ts";
import { compactPatch, newPatch, objectContext, runHandler, type HandlerTools } from "../../handling/index.ts";
import { PermanentError, TemporaryError } from "../../declaring/index.ts";
import type {
  BackgroundSpec, DaemonContext, DaemonFn, HandlerContext, HandlerSpec, TimerContext,
} from "../../declaring/index.ts";
import { isOtherObject, type PatchClient } from "../fence.ts";
import { writeTimerResults } from "./timer-results.ts";
import { makeLive } from "./live-context.ts";
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
  /** Aborts when the run is asked to stop (a daemon's ctx.stopped). */
  stopping: AbortSignal;
  /** Aborts when it is made to stop: a daemon's cancellationBackoff after `stopping`, or at once (ctx.signal). */
  signal: AbortSignal;
  /** The newest body the watch delivered (what a timer call starts with, and a daemon's live ctx reads). */
  body: KubeObject;
  /** When the object's essence last changed (for `idle`), and that essence. */
  changedAt: number;
  essence: unknown;
  /** Resolves when the loop ended, or it was abandoned. */
  ended: Promise<void>;
  /** Sharding: is the shard still this run's to write for (asked before a timer writes)? */
  current?(): boolean;
  /**
   * The object as the run's last write to it answered (ctx.api's or its results'), once it was asked to stop:
   * what the delete handlers read if newer than the deletion's body. Not kept before (a body per run for its life).
   */
  wrote?: KubeObject;
}

export async function callDaemon(options: CallOptions, uid: string, run: Run, retry: number): Promise<RunEnd> {
  const { spec } = run;
  const patch = newPatch(() => run.body);
  const writes = callWrites(run); // as a timer's: the version its own writes returned
  const context = contextOf(options, uid, run, writes.heard);
  makeLive(context, () => run.body, (body) => contextOf(options, uid, run, undefined, body));
  const ctx = Object.assign(context, { patch, retry, stopped: run.stopping }) as DaemonContext;
  let end: RunEnd = { kind: "returned" };
  let result: unknown;
  try {
    result = await (spec.fn as DaemonFn)(ctx);
    loggerOf(options, run).info(`Daemon '${spec.id}' succeeded.`); // it returned: Kopf's line
  } catch (error) {
    if (run.signal.aborted) return { kind: "aborted" };
    end = daemonError(options, run, retry, error);
  }
  // Kopf's rule: the patch (and result, to status.<id>) is written after every exit, a retry's too;
  // not once the daemon was made to stop (its signal), as a timer's aborted call writes nothing.
  run.current?.();
  if (run.signal.aborted) return { kind: "aborted" };
  await write(options, run, compactPatch(patch), result, writes.newest);
  return end;
}

/** What a daemon's throw means: as a handler's (PermanentError, TemporaryError, `errors`, `retries`). */
function daemonError(options: CallOptions, run: Run, retry: number, error: unknown): RunEnd {
  const { spec } = run;
  const log = loggerOf(options, run);
  const mode = error instanceof TemporaryError ? "temporary" : spec.options.errors ?? "temporary";
  if (error instanceof PermanentError || mode === "permanent") {
    log.error("daemon failed permanently; not restarted", { error });
    return { kind: "permanent" };
  }
  if (mode === "ignored") {
    log.warn("daemon failed; the error is ignored (errors: ignored), not restarted", { error });
    return { kind: "returned" };
  }
  const { retries } = spec.options;
  if (retries !== undefined && retry + 1 >= retries) {
    log.error(`daemon failed ${retry + 1} time(s), its retries; not restarted`, { error });
    return { kind: "permanent" };
  }
  const delayMs = paced(options, retryDelay(spec, error instanceof TemporaryError ? error.delay : undefined));
  log.error("daemon failed; restarting after its backoff", { error, retryInMs: delayMs });
  return { kind: "retry", delayMs };
}

/** One attempt of a timer's call; `started`: when the call's first attempt began (its retries keep it). */
export async function callTimer(
  options: CallOptions, uid: string, run: Run, retry: number, started: number,
): Promise<RunEnd> {
  const { spec } = run;
  const patch = newPatch(() => run.body);
  const writes = callWrites(run); // the version its own writes to the object returned: /status is fenced by it
  const context = contextOf(options, uid, run, writes.heard);
  const ctx: TimerContext = { ...context, patch, retry, started: new Date(started) };
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
  // Kopf logs it at info; here at debug: a timer succeeds every interval on every object.
  else log.debug(`Timer '${spec.id}' succeeded.`);
  const result = outcome.kind === "success" ? outcome.result : undefined;
  // A lease that lapsed while this process stalled is given up now (its signal aborts), as a
  // cycle's is before it writes: another replica may run this timer by now (holds.ts).
  run.current?.();
  if (run.signal.aborted) return { kind: "aborted" };
  await write(options, run, compactPatch(patch), result, writes.newest);
  return { kind: "returned" };
}

async function write(
  options: CallOptions, run: Run, user: Record<string, any> | undefined, result: unknown, newest: string | undefined,
): Promise<void> {
  const { resource, client } = options;
  try {
    const { body, signal } = run;
    const after = await writeTimerResults({ client, resource, body, id: run.spec.id, user, result, newest, signal });
    if (after) keepWrote(run, after);
  } catch (error) {
    if (run.signal.aborted || isNotFound(error) || isOtherObject(error)) return;
    loggerOf(options, run).error("could not write the timer's results", { error });
  }
}

/**
 * A daemon's or timer's context. Its own writes to the object are not taken in: no last-handled state is stored
 * for them.
 */
function contextOf(
  options: CallOptions, uid: string, run: Run, wrote?: (after: KubeObject) => void, body = run.body,
) {
  const { resource, tools } = options;
  const memo = options.memo(uid, body.metadata.namespace);
  return objectContext(body, resource, memo, loggerOf(options, run), run.signal, tools, undefined, wrote);
}

/** What one call wrote to its object through ctx.api: the newest version, and the answer kept on the run. */
function callWrites(run: Run): { newest: string | undefined; heard(after: KubeObject): void } {
  const writes = {
    newest: undefined as string | undefined,
    heard(after: KubeObject) {
      writes.newest = after.metadata.resourceVersion;
      keepWrote(run, after);
    },
  };
  return writes;
}

/**
 * Kept once the run was asked to stop: a write from before is newer than the deletion that stops it only if it
 * landed in the moments between the deletion and our hearing of it, not worth a body per run for its life.
 */
function keepWrote(run: Run, after: KubeObject): void {
  if (run.stopping.aborted) run.wrote = after;
}

function paced(options: CallOptions, delayMs: number): number {
  return Math.max(delayMs, options.retryFloorMs ?? 0);
}

function loggerOf(options: CallOptions, run: Run): Logger {
  const { namespace, name } = run.body.metadata;
  return options.logger.child({ namespace, name, [run.spec.kind]: run.spec.id });
}
