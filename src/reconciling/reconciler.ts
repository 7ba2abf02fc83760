// Reconciler: one resource's WatchEvents → its objects' handlers.
// accept(event) → per-object worker (queueing/, keyed by uid, latest wins, batch window,
// bounded concurrency) → on.event handlers → one cycle (handling/cycle.ts) → one merged patch
// (handling/patching.ts) → Events (posting/) → a timer for delayed handlers, kept in the worker.
//
// Layering: reconciling/ is the room above queueing/, watching/ and handling/: the runtime
// only has to create a reconciler per resource and feed it events; handling/ never sees a queue.
//
// After its own PATCH, an object's older versions may still arrive from the watch: the
// reconciler remembers the resourceVersion it wrote and skips events that are not newer
// (compared as integers when both are; otherwise an equal version within a few seconds).
// An echo that was queued while the object was still processing (it beat our write's answer)
// is dropped from the queue the same way (Workers' `skip`), unless the cycle asked to run again.
//
// Must never run two cycles of one object at once, never act on a version older than its
// own last write, and never let a handler's failure escape into the watch stream.

import type { KubeClient } from "../kube/client.ts";
import type { KubeObject, Resource } from "../kube/types.ts";
import type { EventPoster } from "../posting/poster.ts";
import { Workers, type Outcome } from "../queueing/workers.ts";
import { linkedSignal } from "../util/abort.ts";
import { silentLogger, type Logger } from "../util/log.ts";
import type { TaskReport } from "../util/scope.ts";
import type { WatchEvent } from "../watching/types.ts";
import { objectContext } from "../handling/context.ts";
import { runCycle, type CycleEnv, type CyclePlan, type ObjectState } from "../handling/cycle.ts";
import { DEFAULT_DIFF_BASE_LIMIT, sensitiveFields } from "../handling/diffbase.ts";
import { essenceOf } from "../handling/essence.ts";
import { LOST, whileOwned } from "../handling/ownership.ts";
import { deepEqual, matchMeta } from "../handling/filters.ts";
import { applyPlan, planWrites, type PatchTarget } from "../handling/patching.ts";
import type { StorageMode } from "../handling/progress.ts";
import { contentKey, isRefusedForSize, reportRefusal } from "../handling/refusal.ts";
import type { HandlerSpec, Registry } from "../handling/registry.ts";
import type { HandlingDefaults } from "../handling/runner.ts";
import type { EventContext, EventHandlerFn } from "../handling/types.ts";

export interface ReconcilerOptions {
  client: Pick<KubeClient, "patch" | "get">;
  /** The resolved resource (see `client.resolve(selector)` for each of `registry.selectors()`). */
  resource: Resource;
  registry: Registry;
  /** Workers and handling defaults come from here (overridden by `workers`/`handling`). */
  settings?: ReconcilerSettings;
  logger?: Logger;
  poster?: EventPoster;
  /** Where failures, refusals and handler runs are counted (observability's Health, for one). */
  health?: Counters;
  /** Aborting it aborts the handlers at once (like close(0)). */
  signal?: AbortSignal;
  /** Overrides, in ms: `window` (batch window), `limit`, `idleMs`. */
  workers?: { window?: number; limit?: number; idleMs?: number };
  handling?: Partial<HandlingDefaults>;
  /** Largest diff base stored on an object, in bytes (default: settings' handling.diffBaseLimit). */
  diffBaseLimit?: number;
  /** Where to keep progress for resources with a status subresource. Default "status" (see progress.ts). */
  storage?: StorageMode;
  /**
   * The running signal of the freeze gate of this namespace (undefined: cluster-scoped): it
   * aborts when the objects there are taken away, and is aborted while they are frozen. A frozen
   * object's queued item or due retry is dropped unhandled: another operator owns it, and the
   * relist on resume brings it back (seed 000). A freeze aborts the handlers running there and
   * discards their cycles (ownership.ts).
   */
  freezeSignal?(namespace: string | undefined): AbortSignal;
  /** How long handlers may go on after a freeze before they are abandoned, in ms. Default 2000. */
  freezeGraceMs?: number;
}

/** The part of config/'s Settings the reconciler reads (in seconds, as configured; diffBaseLimit in bytes). */
export interface ReconcilerSettings {
  readonly workers: { readonly limit: number; readonly batchWindow: number; readonly idleTimeout: number };
  readonly handling: { readonly retries: number | null; readonly backoff: number; readonly timeout: number | null; readonly diffBaseLimit: number };
}

/** A sink for counters: reconciling/ names what it counts, observability/ keeps the figures. */
export interface Counters {
  count(name: string): void;
}

type Item = Exclude<WatchEvent, { type: "relist-start" } | { type: "relist-done" }>;

interface State extends ObjectState {
  /** The resourceVersion of our last write, and when it was made. */
  wroteRV?: string;
  wroteAt?: number;
  failures: number;
  /** Our write's answer showed changes by others made meanwhile: process this body next. */
  recheck?: KubeObject;
  /** The last cycle asked to run again (finalizer first, a re-check, a delay): not yet done. */
  rerun?: boolean;
  /** Its write was refused as too large (refusal.ts) for this content: do not run it again. */
  refused?: string;
}

const NON_NUMERIC_STALE_MS = 5000;

export class Reconciler {
  readonly resource: Resource;
  private readonly workers: Workers<Item>;
  private readonly states = new Map<string, State>();
  private readonly env: CycleEnv;
  private readonly events: HandlerSpec[];
  private readonly target: PatchTarget;
  private readonly logger: Logger;
  private readonly hard = new AbortController();
  private readonly poster: EventPoster | undefined;
  private readonly health: Counters | undefined;
  private readonly detach: () => void;

  constructor(private readonly options: ReconcilerOptions) {
    const { resource, registry, settings } = options;
    this.resource = resource;
    this.logger = options.logger ?? silentLogger;
    this.poster = options.poster;
    this.health = options.health;
    const all = registry.forResource(resource);
    const changing = all.filter((h) => h.kind !== "event");
    this.events = all.filter((h) => h.kind === "event");
    this.env = {
      resource,
      handlers: changing,
      ids: [...new Set(changing.map((h) => h.id))],
      hasResume: changing.some((h) => h.kind === "resume"),
      defaults: {
        retries: options.handling?.retries !== undefined ? options.handling.retries : (settings?.handling.retries || null),
        backoff: options.handling?.backoff ?? settings?.handling.backoff ?? 60,
        timeout: options.handling?.timeout !== undefined ? options.handling.timeout : (settings?.handling.timeout ?? null),
      },
      diffBase: {
        sensitive: sensitiveFields(resource, all.flatMap((h) => h.sensitive ?? [])),
        limit: options.diffBaseLimit ?? settings?.handling.diffBaseLimit ?? DEFAULT_DIFF_BASE_LIMIT,
      },
      logger: this.logger,
    };
    this.target = {
      client: options.client,
      resource,
      storage: { mode: resource.statusSubresource ? (options.storage ?? "status") : "annotations" },
      logger: this.logger,
    };
    const linked = linkedSignal(options.signal);
    this.detach = linked.dispose;
    linked.signal.addEventListener("abort", () => this.hard.abort(), { once: true });
    this.workers = new Workers<Item>({
      process: (uid, item, signal) => this.process(uid, item, signal),
      skip: (uid, item) => this.superseded(uid, item),
      window: options.workers?.window ?? (settings ? settings.workers.batchWindow * 1000 : 100),
      limit: options.workers?.limit ?? settings?.workers.limit ?? 100,
      idleMs: options.workers?.idleMs ?? (settings ? settings.workers.idleTimeout * 1000 : 10_000),
      signal: linked.signal,
      logger: this.logger,
      name: `handling ${resource.plural}`,
    });
  }

  /** Takes one watch event; returns at once. Relist markers are not needed here and are ignored. */
  accept(event: WatchEvent): void {
    if (event.type === "relist-start" || event.type === "relist-done") return;
    const uid = event.object.metadata?.uid;
    if (!uid) return;
    if (event.type !== "deleted" && this.isStale(uid, event.object)) return;
    // A listed object is the current state already: no batch window to wait for newer events.
    this.workers.push(uid, event, event.type === "listed");
  }

  /** Stops: handlers' signals abort now; writes in flight get `graceMs` to finish; nothing is left running. */
  async close(graceMs: number): Promise<TaskReport> {
    const timer = setTimeout(() => this.hard.abort(), graceMs);
    try {
      const report = await this.workers.close(graceMs);
      // Workers are named by uid; say which handler on which object was left running.
      const abandoned = report.abandoned.map((task) => {
        const running = this.states.get(task.slice(task.lastIndexOf("/") + 1))?.running;
        return running ? `handler ${running} (${task})` : task;
      });
      return { abandoned };
    } finally {
      clearTimeout(timer);
      this.hard.abort();
      this.detach();
    }
  }

  /** Resolves once every accepted event has been processed (delayed retries aside). */
  settled(): Promise<void> {
    return this.workers.settled();
  }

  /** Objects with a live worker (for tests and metrics). */
  get activeObjects(): number {
    return this.workers.size;
  }

  /** Most objects processed at the same time so far. */
  get peakConcurrency(): number {
    return this.workers.peak;
  }

  /**
   * Whether `object` is not newer than our own last write. `orEqual`: an equal version is stale
   * too (the watch's echo of our write, on arrival); for queued items it is not (it may be the
   * server's answer to that very write, which is the freshest state we know).
   */
  private isStale(uid: string, object: KubeObject, orEqual = true): boolean {
    const state = this.states.get(uid);
    const wrote = state?.wroteRV;
    const rv = object.metadata.resourceVersion;
    if (!wrote || !rv) return false;
    if (isDigits(rv) && isDigits(wrote)) {
      return rv.length < wrote.length || (rv.length === wrote.length && (orEqual ? rv <= wrote : rv < wrote));
    }
    return orEqual && rv === wrote && Date.now() - (state.wroteAt ?? 0) < NON_NUMERIC_STALE_MS;
  }

  /**
   * Whether an item that waited while its object was processing needs no cycle: older than
   * our own write (process() would drop it), or the watch's echo of that write when the cycle
   * asked for nothing more (what accept() drops when the echo comes after our write's answer;
   * here it came before). Dropped before the batch window, so it costs neither a cycle nor a timer.
   */
  private superseded(uid: string, item: Item): boolean {
    if (item.type === "deleted") return false;
    const state = this.states.get(uid);
    if (!state || state.recheck) return false;
    return state.rerun ? this.isStale(uid, item.object, false) : this.isStale(uid, item.object);
  }

  private async process(uid: string, item: Item, signal: AbortSignal): Promise<Outcome<Item> | void> {
    const freeze = this.options.freezeSignal?.(item.object.metadata.namespace);
    if (!freeze) return this.cycle(uid, item, signal, undefined);
    const graceMs = this.options.freezeGraceMs ?? 2000;
    const outcome = await whileOwned({ freeze, signal, graceMs, onAbandoned: () => this.abandoned(uid, item.object, graceMs) }, (owned) =>
      this.cycle(uid, item, owned, freeze),
    );
    if (outcome !== LOST) return outcome;
    const state = this.states.get(uid);
    if (item.type === "deleted") this.states.delete(uid);
    // Forget our last write, so that the relist's copy of this very version is not dropped as
    // our own echo: it carries the progress (a retry due) that must run after the resume.
    else if (state) state.wroteRV = state.wroteAt = undefined;
  }

  /** One cycle of one object; `freeze`: nothing is written once it aborts (whileOwned discards the cycle). */
  private async cycle(uid: string, item: Item, signal: AbortSignal, freeze: AbortSignal | undefined): Promise<Outcome<Item> | void> {
    let body = item.object;
    if (item.type === "deleted") {
      const state = this.states.get(uid);
      await this.runEventHandlers(item, state?.memo ?? {}, signal);
      this.states.delete(uid);
      return;
    }
    let state = this.states.get(uid);
    if (this.isStale(uid, body, false)) {
      // An older version than our own write; but if that write showed a change made meanwhile,
      // the re-check must still happen, with the newest body known.
      if (!state?.recheck) return;
      body = state.recheck;
      item = { type: "modified", object: body };
    }
    if (!state) this.states.set(uid, (state = { memo: {}, seen: false, failures: 0 }));
    state.recheck = undefined;
    state.rerun = false;
    if (this.events.length) await this.runEventHandlers(item, state.memo, signal);
    if (state.refused !== undefined) {
      if (state.refused === contentKey(body)) return; // the same write would be refused again
      state.refused = undefined;
    }

    let plan: CyclePlan;
    let newest: KubeObject | "gone" = body;
    try {
      plan = await runCycle(this.env, state, body, signal);
      this.report(body, plan);
      if (planWrites(plan)) {
        if (freeze?.aborted) return this.discarded(body);
        newest = await this.write(body, plan, freeze);
        if (newest === "gone") {
          this.states.delete(uid);
          return;
        }
        state.wroteRV = newest.metadata.resourceVersion;
        state.wroteAt = Date.now();
      }
      state.failures = 0;
    } catch (error) {
      if (signal.aborted && this.hard.signal.aborted) return;
      if (freeze?.aborted) return this.discarded(body);
      if (isRefusedForSize(error)) {
        state.refused = contentKey(body);
        reportRefusal(body, error, { logger: this.logger, poster: this.poster });
        this.health?.count("kobun_processing_refusals_total");
        return;
      }
      state.failures++;
      const again = Math.min(60_000, 1000 * 2 ** (state.failures - 1));
      this.logger.error("could not process the object; will retry", {
        namespace: body.metadata.namespace, name: body.metadata.name, error, retryInMs: again,
      });
      this.health?.count("kobun_processing_failures_total");
      // Visible where people look (kubectl describe), not only in the operator's log; the
      // backoff (up to a minute) bounds how often.
      const reason = error instanceof Error ? error.message : String(error);
      this.poster?.post(body, "Warning", "Error", `Could not write the handlers' results: ${reason}; retrying in ${Math.round(again / 1000)}s.`, "error");
      state.rerun = true;
      return { again, item };
    }
    const fresh: Item = { type: "modified", object: newest };
    if (plan.finalizerFirst) {
      state.rerun = true;
      return { again: 0, item: fresh };
    }
    if (newest !== body && changedMeanwhile(body, newest, plan)) {
      // Someone changed the object between our read and our write. The watch events of that
      // change are older than our write and will be skipped as stale, so look again now.
      state.recheck = newest;
      state.rerun = true;
      return { again: 0, item: fresh };
    }
    if (plan.delay !== undefined) {
      state.rerun = true;
      return { again: plan.delay, item: fresh };
    }
    return newest === body ? undefined : { item: fresh };
  }

  /** Writes the plan; a freeze aborts the write too (the object is no longer ours to write). */
  private async write(body: KubeObject, plan: CyclePlan, freeze: AbortSignal | undefined): Promise<KubeObject | "gone"> {
    if (!freeze) return applyPlan(this.target, body, plan, this.hard.signal);
    const link = linkedSignal(this.hard.signal, freeze);
    try {
      return await applyPlan(this.target, body, plan, link.signal);
    } finally {
      link.dispose();
    }
  }

  private discarded(body: KubeObject): void {
    this.logger.debug("frozen: the cycle's results are not written", { namespace: body.metadata.namespace, name: body.metadata.name });
  }

  private abandoned(uid: string, body: KubeObject, graceMs: number): void {
    const running = this.states.get(uid)?.running ?? "(none: the cycle was writing)";
    this.logger.warn("abandoned a handler that ignored the freeze past the grace period; nothing is written for it", {
      handler: running, namespace: body.metadata.namespace, name: body.metadata.name, gracePeriodMs: graceMs,
    });
    this.health?.count("kobun_handlers_abandoned_total");
  }

  private async runEventHandlers(item: Item, memo: Record<string, any>, signal: AbortSignal): Promise<void> {
    const body = item.object;
    const base = objectContext(body, this.resource, memo, this.logger, signal);
    for (const spec of this.events) {
      if (!matchMeta(spec.options.labels, body.metadata.labels) || !matchMeta(spec.options.annotations, body.metadata.annotations)) continue;
      const ctx: EventContext = { ...base, type: item.type, logger: this.logger.child({ namespace: base.namespace, name: base.name, handler: spec.id }) };
      try {
        if (spec.options.when && !(spec.options.when as unknown as (c: EventContext) => boolean)(ctx)) continue;
        await (spec.fn as EventHandlerFn)(ctx);
      } catch (error) {
        ctx.logger.error("event handler failed (event handlers are not retried)", { error });
      }
    }
  }

  /** Logs and posts the outcome of every handler that ran. */
  private report(body: KubeObject, plan: CyclePlan): void {
    for (const { spec, outcome, retry } of plan.runs) {
      const fields = { namespace: body.metadata.namespace, name: body.metadata.name, handler: spec.id, cause: plan.cause };
      if (outcome.kind === "success") {
        const message = `Handler '${spec.id}' succeeded.`;
        if (outcome.ignored) this.logger.warn(`Handler '${spec.id}' failed; the error is ignored.`, { ...fields, error: outcome.ignored });
        else this.logger.info(message, fields);
        this.health?.count(`kobun_handler_runs_total{outcome="success"}`);
        this.poster?.post(body, "Normal", "Logging", message, "info");
      } else if (outcome.kind === "retry") {
        const message = `Handler '${spec.id}' failed temporarily: ${outcome.error.message}`;
        this.logger.warn(message, { ...fields, retry, retryIn: outcome.delay });
        this.health?.count(`kobun_handler_runs_total{outcome="retry"}`);
        this.poster?.post(body, "Warning", "Logging", message, "warn");
      } else if (outcome.kind === "failure") {
        const message = `Handler '${spec.id}' failed permanently: ${outcome.error.message}`;
        this.logger.error(message, { ...fields, retry });
        this.health?.count(`kobun_handler_runs_total{outcome="failure"}`);
        this.poster?.post(body, "Warning", "Logging", message, "error");
      }
    }
    if (plan.cause !== "noop" && plan.cause !== "free" && !plan.finalizerFirst && !plan.delay && plan.runs.length) {
      this.logger.debug(`All handlers succeeded for ${plan.cause}.`, { namespace: body.metadata.namespace, name: body.metadata.name });
    }
  }
}

function changedMeanwhile(before: KubeObject, after: KubeObject, plan: CyclePlan): boolean {
  if (Boolean(after.metadata.deletionTimestamp) !== Boolean(before.metadata.deletionTimestamp)) return true;
  return plan.essence !== undefined && !deepEqual(essenceOf(after), plan.essence);
}

function isDigits(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return s.length > 0;
}
