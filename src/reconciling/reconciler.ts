// Reconciler: one resource's WatchEvents → its objects' handlers. accept(event) → per-object
// worker (queueing/, keyed by uid, latest wins, batch window, bounded concurrency) → on.event
// handlers → one cycle (handling/cycle.ts, or the resource's on.reconcile: reconcile-mode.ts) →
// one merged patch (patching.ts, fenced: fence.ts) → Events (posting/) → a re-run kept in the worker.
// The runtime feeds it events (and wakes: what a reconcile owns or watches changed); handling/ sees no queue.
// Each object's life is explicit state (life.ts: its phase and our last write), moved only by the
// pure transitions there; this file is the I/O around them. After its own PATCH, an object's older
// versions may still arrive from the watch: they are skipped as not newer than our write
// (kube/versions.ts), and so is an echo queued while the object was processing (Workers' `skip`),
// unless the cycle asked to run again. The finalizer: finalizer.ts. A deletion seen aborts the
// object's running cycle as a freeze does, and nothing of it is written (tracked.ts).
// Must never run two cycles of one object at once, never act on a version older than its own
// last write, never write for an object once its deletion was seen, and never let a handler's
// failure escape into the watch stream.

import { Workers, type Outcome as WorkerOutcome } from "../queueing/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import { eitherSignal, linkedSignal, silentLogger, tracing, type Logger, type TaskReport } from "../util/index.ts";
import type { WatchEvent } from "../watching/index.ts";
import type { CycleEnv, CyclePlan, ObjectState } from "../handling/index.ts";
import { applyPlan, planWrites, type PatchTarget } from "./patching.ts";
import { contentKey, isRefusedForSize, reportRefusal } from "./refusal.ts";
import { cycleWithFinalizer } from "./finalizer.ts";
import { admits, begin, step, type Outcome } from "./life.ts";
import {
  cycleEnvOf, freezeGraceMsOf, patchTargetOf, workerTimingOf, type CycleHold, type ReconcilerOptions,
} from "./options.ts";
import { freezeOf, heldEnv, LOST, whileOwned } from "./ownership.ts";
import {
  reportAbandoned, reportDeleted, reportDiscarded, reportFailure, reportGone, reportRuns, runEventHandlers,
  type Audience, type Item,
} from "./reporting.ts";
import { Background, backgroundOptionsOf, newerOf } from "./daemons/background.ts";
import { releaseIfUnwatched } from "./unwatched.ts";
import { measuredCycle, noteOutcome, notePlan, tracedCycle } from "./tracing.ts";
import { nextOf, writtenOutcome } from "./next-step.ts";
import { DELETED, skips, TrackedObjects, WAS_DELETED, type Tracked } from "./tracked.ts";
import { reconcileModeOf, type ReconcileMode, type WakeTarget } from "./reconcile/reconcile-mode.ts";

export type { ReconcilerOptions, ReconcilerSettings, ReconcileObserver, ReconcileResult } from "./options.ts";

export class Reconciler {
  readonly resource: Resource;
  private readonly workers: Workers<Item>;
  private readonly states: TrackedObjects; // by uid: an entry per known object
  private readonly env: CycleEnv;
  private readonly audience: Audience;
  private readonly target: PatchTarget;
  private readonly logger: Logger;
  private readonly hard = new AbortController();
  private readonly detach: () => void;
  /** Objects whose current cycle failed (one cycle per object at a time): its result is "error". */
  private readonly erred = new Set<string>();
  /** The daemons and timers of the resource's objects (background-phases.ts: their phases). */
  private readonly background: Background;
  /** Set when the resource has an on.reconcile: it runs instead of handling/'s cycle. */
  readonly reconciling: ReconcileMode | undefined;

  constructor(private readonly options: ReconcilerOptions) {
    const { resource } = options;
    this.resource = resource;
    this.states = new TrackedObjects(options.memo);
    this.logger = options.logger ?? silentLogger;
    const { env, events } = cycleEnvOf(options, this.logger);
    this.env = env;
    this.audience = {
      resource, logger: this.logger, poster: options.poster, observer: options.observers?.cycles, events,
      tools: this.env.tools,
    };
    this.target = patchTargetOf(options, this.logger);
    this.reconciling = reconcileModeOf(options, this.logger, this.env.tools);
    const linked = linkedSignal(options.signal);
    this.detach = linked.dispose;
    linked.signal.addEventListener("abort", () => this.hard.abort(), { once: true });
    const memo = (uid: string, namespace: string | undefined) => this.states.memoOf(uid, namespace);
    this.background = new Background(backgroundOptionsOf(options, this.logger, this.env.tools, memo, this.hard.signal));
    this.workers = new Workers<Item>({
      process: (uid, item, signal) => {
        if (!tracing()) return this.measured(uid, item, signal);
        return tracedCycle(this.resource, uid, item, () => this.measured(uid, item, signal));
      },
      skip: (uid, item) => skips(this.states.get(uid), item, Date.now()),
      ...workerTimingOf(options),
      signal: linked.signal,
      logger: this.logger,
      name: `handling ${resource.plural}`,
      ...(options.observers?.queue ? { observer: options.observers.queue } : {}),
    });
  }

  /** Takes one watch event; returns at once. Relist markers are not needed here and are ignored. */
  accept(event: WatchEvent): void {
    if (event.type === "relist-start" || event.type === "relist-done") return;
    const uid = event.object.metadata?.uid;
    if (!uid) return;
    // Daemons and timers follow every event at once (a deletion stops them within milliseconds),
    // even one that needs no cycle: an unchanged object relisted on resume starts them again.
    // Indexes first: the handlers of this very event see it indexed.
    this.options.indexes?.observe(this.resource, event.object, event.type === "deleted");
    const tracked = this.states.get(uid);
    if (event.type === "deleted") {
      void this.background.stop(uid);
      tracked?.cycle?.abort(DELETED); // its handlers stop as at a freeze; nothing of the gone object is written
    } else this.background.sync(event.object);
    const rv = event.object.metadata.resourceVersion;
    if (!admits(tracked, event.type === "deleted", rv, Date.now())) {
      tracked?.echoed(rv); // not newer than our write: one copy of its version is enough
      return;
    }
    // A listed object is the current state already (no batch window to wait for newer events), and
    // a re-check of what start-up or a relist found: news of any object goes before it (queueing/lines.ts).
    const listed = event.type === "listed";
    this.workers.push(uid, event, { immediate: listed, priority: listed ? "low" : "high" });
  }

  /** Runs an object's on.reconcile again (what it owns or watches changed); one not known here is left. */
  wake(target: WakeTarget, low = false): void {
    const woken = this.reconciling?.wakeOf(target);
    const tracked = woken && this.states.get(woken.uid); // only objects seen here (ours: served, this shard)
    if (!tracked) return;
    tracked.woken = true;
    this.workers.push(woken.uid, woken.item, low ? { immediate: true, priority: "low" } : {});
  }

  /** Stops: handlers' signals abort now; writes in flight get `graceMs` to finish; nothing is left running. */
  async close(graceMs: number): Promise<TaskReport> {
    const timer = setTimeout(() => this.hard.abort(), graceMs);
    try {
      const [report, background] = await Promise.all([this.workers.close(graceMs), this.background.close(graceMs)]);
      return { abandoned: [...this.states.named(report.abandoned), ...background] };
    } finally {
      clearTimeout(timer);
      this.hard.abort();
      this.detach();
    }
  }

  /** Forgets the objects `which` picks (a shard given up or taken): they start afresh (on.resume, a new memo). */
  forget(which: (object: Pick<KubeObject, "metadata">) => boolean): void {
    this.states.forget(which);
  }

  /** Objects whose life or memo is kept (for tests and diagnostics). */
  get trackedObjects(): number {
    return this.states.size;
  }

  /** Resolves once every accepted event has been processed (delayed retries aside). */
  settled(): Promise<void> {
    return this.workers.settled();
  }

  /** The phases of an object's daemons and timers by id (background-phases.ts), for tests and diagnostics. */
  backgroundPhases(uid: string): Record<string, string> {
    return this.background.phases(uid);
  }

  /** Objects with a live worker (for tests and metrics). */
  get activeObjects(): number {
    return this.workers.size;
  }

  /** Most objects processed at the same time so far. */
  get peakConcurrency(): number {
    return this.workers.peak;
  }

  private async measured(uid: string, item: Item, signal: AbortSignal): Promise<WorkerOutcome<Item> | void> {
    const primed = this.options.indexes?.primed(signal); // undefined: primed already (or no indexes), so no await
    if (primed && !(await primed)) return; // no handler before every index's first LIST (indexes.ts)
    const observer = this.options.observers?.cycles;
    if (!observer) return this.owned(uid, item, signal);
    return measuredCycle(observer, () => this.erred.delete(uid), () => this.owned(uid, item, signal));
  }

  /** One cycle under its shard's hold when sharded: the handover waits until it ended. */
  private owned(uid: string, item: Item, signal: AbortSignal): Promise<WorkerOutcome<Item> | void> {
    const hold = this.options.ownership?.hold?.(item.object);
    if (!hold) return this.whileOurs(uid, item, signal, undefined); // unsharded: no frame of its own per cycle
    return this.whileOurs(uid, item, signal, hold).finally(() => hold.exit());
  }

  /** One cycle while the object is ours: a freeze (or its shard's handover) aborts it and discards its writes. */
  private async whileOurs(
    uid: string, item: Item, signal: AbortSignal, hold: CycleHold | undefined,
  ): Promise<WorkerOutcome<Item> | void> {
    const freeze = freezeOf(this.options.ownership?.freezeSignal?.(item.object.metadata.namespace), hold?.signal);
    if (!freeze) return this.cycle(uid, item, signal, undefined);
    const graceMs = freezeGraceMsOf(this.options);
    const onAbandoned = () => reportAbandoned(this.audience, this.states.get(uid)?.running, item.object, graceMs);
    const outcome = await whileOwned({ freeze, signal, graceMs, onAbandoned }, (owned) =>
      this.cycle(uid, item, owned, freeze, hold),
    );
    if (outcome !== LOST) return outcome;
    const tracked = this.states.get(uid);
    if (item.type === "deleted") this.states.delete(uid);
    else if (tracked) tracked.live(step(tracked, { kind: "lost" }, Date.now()).life ?? tracked);
  }

  /** One cycle of one object; `freeze`: nothing is written once it aborts (whileOwned discards the cycle). */
  private async cycle(
    uid: string, item: Item, signal: AbortSignal, freeze: AbortSignal | undefined, hold?: CycleHold,
  ): Promise<WorkerOutcome<Item> | void> {
    const tracked = this.states.get(uid);
    if (item.type === "deleted") {
      if (this.env.handlers.length > 0) reportDeleted(this.audience, item.object);
      await runEventHandlers(this.audience, item, tracked?.memo ?? {}, signal);
      this.states.delete(uid);
      // Deleted from the watch while it lives on (it left the selectors): not ours to hold any more.
      const stopped = () => Boolean(freeze?.aborted || this.hard.signal.aborted);
      await releaseIfUnwatched(item.object, (plan) => this.write(item.object, plan, freeze), this.logger, stopped);
      return;
    }
    if (item.wake && this.reconciling) {
      const fresh = await this.reconciling.fresh(item.object, tracked?.wrote?.rv, this.options.client, signal);
      if (!fresh) return;
      item = { type: "modified", object: fresh, wake: true }; // no on.event for it: nothing happened to the object
    }
    const start = begin(tracked, item.object, Date.now(), contentKey);
    if (start.kind === "skip") return;
    const body = start.body;
    const event: Item = body === item.object ? item : { type: "modified", object: body };
    if (start.kind === "events-only") {
      const memo = tracked?.memo ?? { ...this.options.memo };
      if (this.audience.events.length) await runEventHandlers(this.audience, event, memo, signal);
      return; // the same write would be refused again
    }
    const entry = tracked ?? this.states.track(uid, body.metadata.namespace);
    entry.live(start.life);
    const outcome = await entry.untilDeleted(signal, async (live) => {
      if (this.audience.events.length && !item.wake) await runEventHandlers(this.audience, event, entry.memo, live);
      return this.handle(body, entry, live, freeze, hold);
    });
    // Deleted, forgotten, or frozen: whileOurs settles what a freeze took.
    if (outcome === WAS_DELETED || this.states.get(uid) !== entry || freeze?.aborted) return;
    return this.settle(uid, entry, event, outcome);
  }

  /** Runs the engine on `body` and writes its plan: the outcome, as life.ts's transitions take it. */
  private async handle(
    body: KubeObject, object: ObjectState, signal: AbortSignal, freeze: AbortSignal | undefined, hold?: CycleHold,
  ): Promise<Outcome> {
    try {
      // The delete handlers run only once the object's daemons and timers have stopped, on their last writes.
      if (body.metadata.deletionTimestamp) body = newerOf(body, await this.background.stop(body.metadata.uid ?? ""))!;
      const plan = this.reconciling // heldEnv: the Events its handlers post are dropped once a freeze takes it
        ? await this.reconciling.plan(object, body, signal, this.background, heldEnv(this.env, freeze).tools)
        : await cycleWithFinalizer(heldEnv(this.env, freeze), object, body, signal, this.background);
      if (plan.error && this.options.observers?.cycles) this.erred.add(body.metadata.uid ?? "");
      hold?.current?.(); // a shard whose lease lapsed while this process stalled is given up now: its freeze aborts
      // Lost meanwhile: not even an Event about these runs, whose results are never written.
      if (freeze?.aborted) return reportDiscarded(this.audience, body, plan);
      if (signal.reason === DELETED) return reportGone(this.audience, body);
      reportRuns(this.audience, body, plan);
      notePlan(plan);
      if (!planWrites(plan)) return writtenOutcome(body, undefined, false, nextOf(plan, body, body), plan.delay);
      const newest = await this.write(body, plan, freeze);
      if (newest === "gone") return reportGone(this.audience, body);
      if (newest !== body) this.reconciling?.wrote(newest);
      const next = this.reconciling ? this.reconciling.nextOf(plan, body, newest, object) : nextOf(plan, body, newest);
      return writtenOutcome(body, newest !== body ? newest : undefined, true, next, plan.delay);
    } catch (error) {
      this.reconciling?.unwritten(object); // its result is not written: the retry reconciles again
      if (signal.aborted && this.hard.signal.aborted) return { kind: "stopped" };
      if (freeze?.aborted) return reportDiscarded(this.audience, body);
      if (isRefusedForSize(error)) {
        reportRefusal(body, error, { logger: this.logger, poster: this.audience.poster });
        this.audience.observer?.writeRefused();
        return { kind: "refused", content: contentKey(body) };
      }
      return { kind: "failed", error };
    }
  }

  /** Moves the object's life by the outcome; tells the workers when to run again, and with what. */
  private settle(uid: string, entry: Tracked, event: Item, outcome: Outcome): WorkerOutcome<Item> | void {
    noteOutcome(outcome);
    const next = step(entry, outcome, Date.now());
    if (!next.life) {
      this.states.delete(uid);
      return;
    }
    entry.live(next.life);
    if (outcome.kind === "failed") {
      if (this.options.observers?.cycles) this.erred.add(uid);
      reportFailure(this.audience, event.object, outcome.error, next.again ?? 0);
    }
    if (next.again === undefined && !next.body) return;
    // A reconcile's re-run is woken: it reads its object afresh, never older than our last write.
    const rerun: Item = next.body ? { type: "modified", object: next.body } : event;
    const item: Item = this.reconciling && next.again !== undefined ? { ...rerun, wake: true } : rerun;
    if (next.again === undefined) return { item };
    return { again: next.again, item, ...(next.behindNews ? { behindNews: true } : {}) };
  }

  /** Writes the plan; a freeze aborts the write too (the object is no longer ours to write). */
  private write(body: KubeObject, plan: CyclePlan, freeze: AbortSignal | undefined): Promise<KubeObject | "gone"> {
    return applyPlan(this.target, body, plan, freeze ? eitherSignal(this.hard.signal, freeze) : this.hard.signal);
  }
}
