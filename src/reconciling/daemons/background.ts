// The I/O around background-phases.ts: one loop per (object, daemon or timer), started when the
// object is wanted (it matches, is not being deleted, its namespace is not frozen), stopped when
// it no longer is. Every run's signal follows the freeze gate of the object's namespace and the
// shutdown: a freeze aborts daemons and timer calls at once (ownership is exclusive, DESIGN
// behaviour 4), and nothing starts while frozen (Kopf ran daemons on a paused replica, #1266).
// A run is asked to stop (ctx.stopped) at once, and made to (ctx.signal) a daemon's
// `cancellationBackoff` later (Kopf's stages); one still going `cancellationTimeout` after
// that is abandoned and named in a warning.
// A timer's patch and result are written only if its call was not aborted.

import { compareResourceVersions, type KubeObject } from "../../kube/index.ts";
import { clock, linkedSignal, sleep } from "../../util/index.ts";
import { essenceOf, objectFiltersPass, objectContext } from "../../handling/index.ts";
import { deepEqual } from "../../declaring/index.ts";
import type { BackgroundSpec, HandlerSpec } from "../../declaring/index.ts";
import { workerTimingOf, type Ownership, type ReconcilerOptions } from "../options.ts";
import type { HandlerTools } from "../../handling/index.ts";
import type { Logger } from "../../util/index.ts";
import {
  afterRun, awaitsChange, dueAt, holdsDeletion, idleWait, starting, type BackgroundPhase,
} from "./background-phases.ts";
import { callDaemon, callTimer, type CallOptions, type Run } from "./background-calls.ts";

const DEFAULT_CANCELLATION_S = 5;

/** What the Background runs, and with what (the calls' part: background-calls.ts). */
export interface BackgroundOptions extends CallOptions {
  specs: BackgroundSpec[];
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
      const wanted = !body.metadata.deletionTimestamp && !freeze?.aborted && !this.options.signal.aborted
        && this.matches(spec, uid, body);
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

  /**
   * The object is gone (or its deletion is to be handled): stops all its runs; resolves once they ended or were
   * abandoned, with the newest version of the object their own writes answered (a daemon's last patch, written
   * as it stopped), which the delete handlers must read instead of an older one (DESIGN behaviour 5).
   */
  async stop(uid: string): Promise<KubeObject | undefined> {
    const runs = this.objects.get(uid);
    if (!runs) return undefined;
    const all = [...runs.values()];
    for (const run of all) this.halt(run);
    await Promise.all(all.filter((r) => holdsDeletion(r.phase)).map((r) => r.ended));
    return all.reduce<KubeObject | undefined>((newest, run) => newerOf(newest, run.wrote), undefined);
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
    const { resource, logger, signal } = this.options;
    const make = () => objectContext(body, resource, this.options.memo(uid, body.metadata.namespace), logger, signal);
    return objectFiltersPass(spec, body, make);
  }

  private refresh(run: Run, body: KubeObject): void {
    run.body = body;
    if (run.spec.options.idle === undefined) return;
    const essence = essenceOf(body);
    if (!deepEqual(essence, run.essence)) {
      run.essence = essence;
      run.changedAt = clock().now();
    }
  }

  private spawn(uid: string, spec: BackgroundSpec, body: KubeObject, freeze: AbortSignal | undefined): Run | undefined {
    const hold = this.options.ownership?.hold?.(body);
    if (hold?.signal.aborted) {
      hold.exit(); // not our shard (any more): another replica runs it
      return undefined;
    }
    const stop = new AbortController();
    // Asked to stop (ctx.stopped): at once, whatever the cause. Made to stop (ctx.signal, what its
    // I/O is bound to): a daemon's cancellationBackoff later, but at once on a freeze or a shard
    // handed over, since ownership is exclusive (another replica may run it by now).
    const asked = linkedSignal(this.options.signal, freeze, hold?.signal, stop.signal);
    const forced = linkedSignal(freeze, hold?.signal);
    const now = clock().now();
    const run: Run = {
      spec, phase: starting(spec, now, uid), stop, stopping: asked.signal, signal: forced.signal, body, changedAt: now,
      essence: spec.options.idle !== undefined ? essenceOf(body) : undefined, ended: Promise.resolve(),
      ...(hold?.current ? { current: () => hold.current!() } : {}),
    };
    const { promise: ended, resolve } = Promise.withResolvers<void>();
    run.ended = ended;
    const timers: ReturnType<typeof setTimeout>[] = [];
    let looping = true;
    const forget = () => {
      for (const timer of timers) clearTimeout(timer);
      asked.dispose();
      forced.dispose();
      hold?.exit();
      const runs = this.objects.get(uid);
      if (runs?.get(spec.id) === run) runs.delete(spec.id);
      if (runs?.size === 0) this.objects.delete(uid);
      resolve();
    };
    // Whatever asked it to stop (freeze, shutdown, halt), it is waited for only this long.
    asked.signal.addEventListener("abort", () => {
      const { backoffMs, timeoutMs } = stoppingOf(spec);
      const force = () => forced.controller.abort(asked.signal.reason);
      if (backoffMs > 0 && looping) timers.push(setTimeout(force, backoffMs));
      else force();
      if (!looping) return forget(); // a finished daemon: nothing runs
      run.phase = { kind: "stopping", since: Date.now() };
      timers.push(setTimeout(() => this.abandon(run, timeoutMs, forget), backoffMs + timeoutMs));
    }, { once: true });
    const failed = (error: unknown) =>
      this.options.logger.error(`${spec.kind} loop failed`, { [spec.kind]: spec.id, error });
    void this.loop(uid, run).catch(failed).finally(() => {
      looping = false;
      // A finished daemon stays known (not restarted) until the object goes or stops matching;
      // nothing of it runs, so its shard may be handed over.
      hold?.exit();
      if (run.phase.kind !== "finished" || run.stopping.aborted) forget();
    });
    return run;
  }

  private abandon(run: Run, timeoutMs: number, forget: () => void): void {
    const { spec, body } = run;
    this.options.logger.warn(`abandoned a ${spec.kind} that ignored its stop signal past its cancellationTimeout`, {
      [spec.kind]: spec.id, namespace: body.metadata.namespace, name: body.metadata.name,
      cancellationTimeout: timeoutMs / 1000,
    });
    this.options.abandoned?.();
    forget();
  }

  private halt(run: Run): void {
    run.stop.abort();
  }

  private async loop(uid: string, run: Run): Promise<void> {
    let retry = 0;
    let firstAttempt = 0; // when the call whose attempts these are began (a timer's ctx.started)
    let lastCall: number | undefined; // when the last call's first attempt began (an idle-only timer's)
    while (!run.stopping.aborted) {
      const due = dueAt(run.phase);
      if (due === undefined) return; // finished or stopping
      if (!(await clock().sleep(due - clock().now(), run.stopping))) return;
      const primed = this.options.primed?.(run.stopping);
      if (primed && !(await primed)) return;
      const wait = idleWait(run.spec, run.changedAt, clock().now());
      if (wait > 0) {
        run.phase = { kind: "starting", at: clock().now() + wait };
        continue;
      }
      if (retry === 0 && awaitsChange(run.spec, run.changedAt, lastCall)) {
        run.phase = afterRun(run.spec, { kind: "returned" }, clock().now(), clock().now());
        continue;
      }
      const began = clock().now();
      if (retry === 0) firstAttempt = lastCall = began;
      run.phase = { kind: "running", since: began };
      const call = run.spec.kind === "daemon" ? callDaemon : callTimer;
      const end = await tracked(run, () => call(this.options, uid, run, retry, firstAttempt));
      if (run.stopping.aborted) return;
      retry = end.kind === "retry" ? retry + 1 : 0;
      run.phase = afterRun(run.spec, end, began, clock().now());
    }
  }
}

/** A timer's call is work a virtual clock waits for before its next firing; a daemon's is not (it never ends). */
function tracked<T>(run: Run, call: () => Promise<T>): Promise<T> {
  return run.spec.kind === "timer" ? clock().track(call) : call();
}

/**
 * How a run is stopped, ms: `backoffMs` from the ask (ctx.stopped) to the force (ctx.signal; a
 * daemon's cancellationBackoff, 0 for a timer, as Kopf's), then `timeoutMs` until it is abandoned.
 */
function stoppingOf(spec: BackgroundSpec): { backoffMs: number; timeoutMs: number } {
  const backoff = spec.kind === "daemon" ? (spec.options.cancellationBackoff ?? 0) : 0;
  return { backoffMs: backoff * 1000, timeoutMs: (spec.options.cancellationTimeout ?? DEFAULT_CANCELLATION_S) * 1000 };
}

/**
 * The newer of two versions of one object; `a` when they cannot be ordered (versions not decimal, kube/versions.ts):
 * a daemon's write answered before the deletion must not replace the deletion's body, which alone says it is deleted.
 */
export function newerOf(a: KubeObject | undefined, b: KubeObject | undefined): KubeObject | undefined {
  if (!a || !b) return a ?? b;
  const order = compareResourceVersions(a.metadata.resourceVersion ?? "", b.metadata.resourceVersion ?? "");
  return order === -1 ? b : a;
}

function where(body: KubeObject): string {
  return `${body.metadata.namespace ? `${body.metadata.namespace}/` : ""}${body.metadata.name}`;
}

/** What the resource's daemons and timers run with (background.ts), from the reconciler's options. */
export function backgroundOptionsOf(
  options: ReconcilerOptions, logger: Logger, tools: HandlerTools | undefined,
  memo: BackgroundOptions["memo"], signal: AbortSignal,
): BackgroundOptions {
  const { resource, client, ownership, indexes } = options;
  return {
    specs: options.registry.backgroundFor(resource), resource, client, logger, tools: tools ?? {}, memo, signal,
    abandoned: () => options.observers?.cycles?.backgroundAbandoned(), retryFloorMs: workerTimingOf(options).window,
    ...(ownership ? { ownership } : {}),
    ...(indexes ? { primed: (signal: AbortSignal) => indexes.primed(signal) } : {}),
  };
}
