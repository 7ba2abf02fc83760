// The I/O around background-phases.ts: one loop per (object, daemon or timer), started when the
// object is wanted (it matches, is not being deleted, its namespace is not frozen), stopped when
// it no longer is. Every run's signal follows the freeze gate of the object's namespace and the
// shutdown: a freeze aborts daemons and timer calls at once (ownership is exclusive, DESIGN
// behaviour 4), and nothing starts while frozen (Kopf ran daemons on a paused replica, #1266).
// A run that ignores its signal is abandoned after `cancellationTimeout` and named in a warning.
// A timer's patch and result are written only if its call was not aborted.

import type { KubeObject, Resource } from "../kube/index.ts";
import { isNotFound } from "../kube/index.ts";
import { linkedSignal, sleep } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import { compactPatch, newPatch, objectContext, type HandlerTools } from "../handling/index.ts";
import { essenceOf } from "../handling/index.ts";
import { deepEqual } from "../declaring/index.ts";
import { PermanentError, TemporaryError } from "../declaring/index.ts";
import type { BackgroundSpec, HandlerSpec } from "../declaring/index.ts";
import { runHandler } from "../handling/index.ts";
import type { Ownership } from "./options.ts";
import { metaMatches } from "../handling/index.ts";
import type { DaemonFn, HandlerContext, TimerContext } from "../declaring/index.ts";
import type { PatchClient } from "./fence.ts";
import { isOtherObject } from "./fence.ts";
import { writeTimerResults } from "./timer-results.ts";
import {
  afterRun, DEFAULT_BACKOFF_S, dueAt, holdsDeletion, idleWait, retryDelay, starting, type BackgroundPhase, type RunEnd,
} from "./background-phases.ts";

const DEFAULT_CANCELLATION_S = 5;

export interface BackgroundOptions {
  specs: BackgroundSpec[];
  resource: Resource;
  client: PatchClient;
  logger: Logger;
  tools: HandlerTools;
  /** The memo shared with the object's handlers. */
  memo(uid: string, namespace: string | undefined): Record<string, any>;
  /**
   * The reconciler's: the freeze gate's running signal for a namespace, and (sharding) a hold on
   * the object's shard for as long as a run goes on, so a handover waits for it (and aborts it).
   */
  ownership?: Ownership;
  /** Aborted at shutdown. */
  signal: AbortSignal;
  /** A run that ignored its stop signal past its cancellationTimeout was left behind. */
  abandoned?(): void;
  /** Until the indexes have their first LIST in: undefined when they have; false if `signal` aborted first. */
  primed?(signal: AbortSignal): Promise<boolean> | undefined;
  /**
   * The shortest retry delay, ms: the workers' batch window, which paces a handler's retries
   * (an object is handled at most once per window), so `TemporaryError(0)` in a timer or a
   * daemon retries at a handler's pace, not as fast as the event loop turns.
   */
  retryFloorMs?: number;
}

/** One daemon or timer on one object. */
interface Run {
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

export class Background {
  private readonly objects = new Map<string, Map<string, Run>>();

  constructor(private readonly options: BackgroundOptions) {}

  get empty(): boolean {
    return this.options.specs.length === 0;
  }

  /** Starts what is wanted on `body` and stops what no longer is; returns at once. */
  sync(body: KubeObject): void {
    const uid = body.metadata.uid;
    if (!uid || this.empty) return;
    const freeze = this.options.ownership?.freezeSignal?.(body.metadata.namespace);
    const runs = this.objects.get(uid) ?? new Map<string, Run>();
    for (const spec of this.options.specs) {
      const run = runs.get(spec.id);
      const wanted = !body.metadata.deletionTimestamp && !freeze?.aborted && !this.options.signal.aborted && this.matches(spec, uid, body);
      if (run) {
        if (!wanted) this.halt(run);
        else if (run.phase.kind !== "stopping") this.refresh(run, body);
      } else if (wanted) {
        const spawned = this.spawn(uid, spec, body, freeze);
        if (spawned) runs.set(spec.id, spawned);
      }
    }
    if (runs.size && !this.objects.has(uid)) this.objects.set(uid, runs);
  }

  /** The object is gone (or its deletion is to be handled): stops all its runs; resolves once they ended or were abandoned. */
  async stop(uid: string): Promise<void> {
    const runs = this.objects.get(uid);
    if (!runs) return;
    const all = [...runs.values()];
    for (const run of all) this.halt(run);
    await Promise.all(all.filter((r) => holdsDeletion(r.phase)).map((r) => r.ended));
  }

  /** Whether a daemon or timer that holds the finalizer applies to `body`. */
  holds(body: KubeObject): boolean {
    const uid = body.metadata.uid ?? "";
    return this.options.specs.some((spec) => spec.options.finalizer !== false && this.matches(spec, uid, body));
  }

  /** Phases of the object's runs by id (for tests and diagnostics). */
  phases(uid: string): Record<string, BackgroundPhase["kind"]> {
    return Object.fromEntries([...(this.objects.get(uid)?.entries() ?? [])].map(([id, r]) => [id, r.phase.kind]));
  }

  /** Stops everything: resolves with the runs still going after `graceMs`. */
  async close(graceMs: number): Promise<string[]> {
    const all = [...this.objects.values()].flatMap((runs) => [...runs.values()]);
    for (const run of all) this.halt(run);
    const left = new Set(all);
    for (const run of all) void run.ended.then(() => left.delete(run));
    await Promise.race([Promise.all(all.map((r) => r.ended)), sleep(graceMs)]);
    return [...left].map((r) => `${r.spec.kind} ${r.spec.id} on ${where(r.body)}`);
  }

  private matches(spec: BackgroundSpec, uid: string, body: KubeObject): boolean {
    if (!metaMatches(spec as unknown as HandlerSpec, body)) return false;
    if (!spec.options.when) return true;
    return spec.options.when(objectContext(body, this.options.resource, this.options.memo(uid, body.metadata.namespace), this.options.logger, this.options.signal));
  }

  private refresh(run: Run, body: KubeObject): void {
    run.body = body;
    if (run.spec.options.idle === undefined) return;
    const essence = essenceOf(body);
    if (!deepEqual(essence, run.essence)) {
      run.essence = essence;
      run.changedAt = Date.now();
    }
  }

  private spawn(uid: string, spec: BackgroundSpec, body: KubeObject, freeze: AbortSignal | undefined): Run | undefined {
    const hold = this.options.ownership?.hold?.(body);
    if (hold?.signal.aborted) {
      hold.exit(); // not our shard (any more): another replica runs it
      return undefined;
    }
    const stop = new AbortController();
    const link = linkedSignal(this.options.signal, freeze, hold?.signal, stop.signal);
    const now = Date.now();
    const run: Run = {
      spec, phase: starting(spec, now, uid), stop, signal: link.signal, body, changedAt: now,
      essence: spec.options.idle !== undefined ? essenceOf(body) : undefined, ended: Promise.resolve(),
      ...(hold?.current ? { current: () => hold.current!() } : {}),
    };
    const { promise: ended, resolve } = Promise.withResolvers<void>();
    run.ended = ended;
    let grace: ReturnType<typeof setTimeout> | undefined;
    let looping = true;
    const forget = () => {
      if (grace) clearTimeout(grace);
      link.dispose();
      hold?.exit();
      const runs = this.objects.get(uid);
      if (runs?.get(spec.id) === run) runs.delete(spec.id);
      if (runs?.size === 0) this.objects.delete(uid);
      resolve();
    };
    // Whatever aborted it (freeze, shutdown, halt), it is waited for only this long.
    link.signal.addEventListener("abort", () => {
      if (!looping) return forget(); // a finished daemon: nothing runs
      run.phase = { kind: "stopping", since: Date.now() };
      grace = setTimeout(() => {
        this.options.logger.warn(`abandoned a ${spec.kind} that ignored its stop signal past its cancellationTimeout`, {
          [spec.kind]: spec.id, namespace: run.body.metadata.namespace, name: run.body.metadata.name, cancellationTimeout: cancellationOf(spec),
        });
        this.options.abandoned?.();
        forget();
      }, cancellationOf(spec) * 1000);
    }, { once: true });
    void this.loop(uid, run).catch((error) => this.options.logger.error(`${spec.kind} loop failed`, { [spec.kind]: spec.id, error })).finally(() => {
      looping = false;
      // A finished daemon stays known (not restarted) until the object goes or stops matching;
      // nothing of it runs, so its shard may be handed over.
      hold?.exit();
      if (run.phase.kind !== "finished" || run.signal.aborted) forget();
    });
    return run;
  }

  private halt(run: Run): void {
    run.stop.abort();
  }

  private async loop(uid: string, run: Run): Promise<void> {
    let retry = 0;
    while (!run.signal.aborted) {
      const due = dueAt(run.phase);
      if (due === undefined) return; // finished or stopping
      if (!(await sleep(due - Date.now(), run.signal))) return;
      const primed = this.options.primed?.(run.signal);
      if (primed && !(await primed)) return;
      const wait = idleWait(run.spec, run.changedAt, Date.now());
      if (wait > 0) {
        run.phase = { kind: "starting", at: Date.now() + wait };
        continue;
      }
      const began = Date.now();
      run.phase = { kind: "running", since: began };
      const end = run.spec.kind === "daemon" ? await this.daemon(uid, run, retry) : await this.timer(uid, run, retry);
      if (run.signal.aborted) return;
      retry = end.kind === "retry" ? retry + 1 : 0;
      run.phase = afterRun(run.spec, end, began, Date.now());
    }
  }

  private async daemon(uid: string, run: Run, retry: number): Promise<RunEnd> {
    const { spec } = run;
    const ctx = { ...this.context(uid, run), retry };
    try {
      await (spec.fn as DaemonFn)(ctx);
      return { kind: "returned" };
    } catch (error) {
      if (run.signal.aborted) return { kind: "aborted" };
      const log = this.loggerOf(run);
      if (error instanceof PermanentError) {
        log.error("daemon failed permanently; not restarted", { error });
        return { kind: "permanent" };
      }
      const delayMs = this.paced(retryDelay(spec, error instanceof TemporaryError ? error.delay : undefined));
      log.error("daemon failed; restarting after its backoff", { error, retryInMs: delayMs });
      return { kind: "retry", delayMs };
    }
  }

  private async timer(uid: string, run: Run, retry: number): Promise<RunEnd> {
    const { spec } = run;
    const patch = newPatch();
    let newest: string | undefined; // the version its own writes to the object returned: /status is fenced by it
    const ctx: TimerContext = { ...this.context(uid, run, (after) => (newest = after.metadata.resourceVersion)), patch, retry, started: new Date() };
    const backoff = spec.options.backoff ?? DEFAULT_BACKOFF_S;
    // The handler rules (TemporaryError, PermanentError, `errors`, `retries`) are runner.ts's.
    const outcome = await runHandler(spec as unknown as HandlerSpec, ctx as unknown as HandlerContext, { retries: null, backoff, timeout: null }, run.signal);
    if (run.signal.aborted || outcome.kind === "aborted") return { kind: "aborted" };
    const log = this.loggerOf(run);
    if (outcome.kind === "retry") {
      const delayMs = this.paced(outcome.delay * 1000);
      log.error("timer failed; retrying", { error: outcome.error, retryInMs: delayMs });
      return { kind: "retry", delayMs };
    }
    if (outcome.kind === "failure") log.error("timer failed; next call at its interval", { error: outcome.error });
    const result = outcome.kind === "success" ? outcome.result : undefined;
    // A lease that lapsed while this process stalled is given up now (its signal aborts), as a
    // cycle's is before it writes: another replica may run this timer by now (holds.ts).
    run.current?.();
    if (run.signal.aborted) return { kind: "aborted" };
    await this.write(run, compactPatch(patch), result, newest);
    return { kind: "returned" };
  }

  private async write(run: Run, user: Record<string, any> | undefined, result: unknown, newest: string | undefined): Promise<void> {
    const { resource, client } = this.options;
    try {
      await writeTimerResults({ client, resource, body: run.body, id: run.spec.id, user, result, newest, signal: run.signal });
    } catch (error) {
      if (run.signal.aborted || isNotFound(error) || isOtherObject(error)) return;
      this.loggerOf(run).error("could not write the timer's results", { error });
    }
  }

  /** A daemon's or timer's context. Its own writes to the object are not taken in: no last-handled state is stored for them. */
  private context(uid: string, run: Run, wrote?: (after: KubeObject) => void) {
    const { resource, tools } = this.options;
    return objectContext(run.body, resource, this.options.memo(uid, run.body.metadata.namespace), this.loggerOf(run), run.signal, tools, undefined, wrote);
  }

  private paced(delayMs: number): number {
    return Math.max(delayMs, this.options.retryFloorMs ?? 0);
  }

  private loggerOf(run: Run): Logger {
    return this.options.logger.child({ namespace: run.body.metadata.namespace, name: run.body.metadata.name, [run.spec.kind]: run.spec.id });
  }
}

function cancellationOf(spec: BackgroundSpec): number {
  return spec.options.cancellationTimeout ?? DEFAULT_CANCELLATION_S;
}

function where(body: KubeObject): string {
  return `${body.metadata.namespace ? `${body.metadata.namespace}/` : ""}${body.metadata.name}`;
}
