// What a Reconciler needs when its resource has an `on.reconcile` (reconcile-cycle.ts runs it):
// the resource's store and this operator's writes to it (to find a woken object, and to read it
// never staler than our own last write: fresh-read.ts), `ctx.cache` over every store the
// reconcile may read, and the failure backoff. Made once per resource; refuses a resource that
// also has Kopf-style handlers that change objects (create/update/delete/resume/field): two
// engines deciding one object's finalizer and writes would race each other. on.event, on.index,
// daemons and timers may stand beside it.

import type { KubeObject, Resource } from "../../kube/index.ts";
import { RegistrationError, type Cache, type Registry } from "../../declaring/index.ts";
import { CacheView, type IndexedUids, type CyclePlan } from "../../handling/index.ts";
import type { HandlerTools, ObjectState } from "../../handling/index.ts";
import type { Logger } from "../../util/index.ts";
import type { EventPoster } from "../../posting/index.ts";
import type { Background } from "../daemons/background.ts";
import type { Item } from "../reporting.ts";
import { freshBody } from "./fresh-read.ts";
import { nextOf } from "../next-step.ts";
import { triggers } from "./reconcile-run.ts";
import type { ReconcileObserver, ReconcilerOptions, ReconcileWiring } from "../options.ts";
import { reconcileWithFinalizer, type ReconcileEnv, type ReconcileState } from "./reconcile-cycle.ts";

/** What a ReconcileMode reports to and lends: the logger, the handlers' tools, the metrics, Events, the indexes. */
interface ReconcileHooks {
  logger: Logger;
  tools: HandlerTools;
  observer?: ReconcileObserver | undefined;
  poster?: EventPoster | undefined;
  indexes?: IndexedUids | undefined;
}

/** The resource's ReconcileMode when it has an on.reconcile (then its wiring is required). */
export function reconcileModeOf(
  options: Pick<ReconcilerOptions, "resource" | "registry" | "reconcile" | "poster" | "observers" | "indexes">,
  logger: Logger,
  tools: HandlerTools | undefined,
): ReconcileMode | undefined {
  const { resource, registry } = options;
  if (!registry.reconciles.forResource(resource)) return undefined;
  if (!options.reconcile) throw new Error(`${resource.plural} has an on.reconcile, but no store was wired for it`);
  const hooks = {
    logger, tools: tools ?? {}, observer: options.observers?.cycles, poster: options.poster, indexes: options.indexes,
  };
  return new ReconcileMode(resource, registry, options.reconcile, hooks);
}

const HOW_TO_DECLARE = "name it in on.reconcile's owns or watches, or index it (docs/reconcile.md); " +
  "if it is named there, kobun.yaml disables it (resources: enabled: false; a warning at start says which)";

export class ReconcileMode {
  private readonly env: ReconcileEnv;

  constructor(
    resource: Resource, registry: Registry, private readonly wiring: ReconcileWiring,
    hooks: ReconcileHooks,
  ) {
    const spec = registry.reconciles.forResource(resource)!;
    const rival = registry.forResource(resource).find((handler) => handler.kind !== "event");
    if (rival) {
      throw new RegistrationError(
        `on.reconcile "${spec.id}" and on.${rival.kind} "${rival.id}" are both for ${resource.plural}: a resource ` +
          "is reconciled or handled by cause, not both (on.event, on.index, daemons and timers may join a reconcile)",
      );
    }
    this.env = {
      spec, resource, logger: hooks.logger, tools: hooks.tools, backoff: wiring.backoff,
      observer: hooks.observer, poster: hooks.poster, freshBodies: wiring.readOwnWrites, echoes: wiring.echoes,
      cache: (namespace) => new CacheView(wiring.cache, namespace, HOW_TO_DECLARE, hooks.indexes),
    };
  }

  /** `ctx.cache` as a reconcile in `namespace` reads it (a `watches` map's too). */
  cacheFor(namespace: string | undefined): Cache {
    return this.env.cache(namespace);
  }

  /** The reconcile's cycle of `body`: its plan (reconcile-cycle.ts). */
  /** `tools`: what this call is lent, when not the env's (the loop's, held by a freeze: ownership.ts). */
  plan(
    state: ObjectState, body: KubeObject, signal: AbortSignal, background: Background, tools?: HandlerTools,
  ): Promise<CyclePlan> {
    return reconcileWithFinalizer(this.env, state as ReconcileState, body, signal, background, tools);
  }

  /**
   * The item that wakes an object (something it owns or watches changed): the object as this operator knows
   * it now (the store, or our newer write), if it is the one meant (its uid, when given).
   */
  wakeOf(target: WakeTarget): { uid: string; item: Item } | undefined {
    const body = this.wiring.writes.get(target.name, target.namespace);
    const uid = body?.metadata.uid;
    if (!body || !uid || (target.uid && target.uid !== uid)) return undefined;
    return { uid, item: { type: "modified", object: body, wake: true } };
  }

  /** The body a woken reconcile runs on (fresh-read.ts); undefined: gone. */
  fresh(
    known: KubeObject, wrote: string | undefined, client: FreshClient, signal: AbortSignal,
  ): Promise<KubeObject | undefined> {
    const { store, writes, readOwnWrites, catchUpMs } = this.wiring;
    const reads = { resource: this.env.resource, store, writes, client, timeoutMs: catchUpMs, enabled: readOwnWrites };
    return freshBody(reads, known, wrote, signal);
  }

  /**
   * What a written reconcile asks for next: as handling/'s cycle (nextOf), but "changed" when the answer shows
   * a change of its triggers made meanwhile by others (its watch events are older than our write and skipped).
   */
  nextOf(plan: CyclePlan, body: KubeObject, newest: KubeObject, state: ObjectState): ReturnType<typeof nextOf> {
    const next = nextOf(plan, body, newest);
    if (next !== "done" && next !== "delayed") return next;
    if (newest === body || triggers(newest, this.env.spec.on) === triggers(body, this.env.spec.on)) return next;
    (state as ReconcileState).reconciled = undefined;
    return "changed";
  }

  /** The plan of `state`'s reconcile was not written: it is not reconciled. */
  unwritten(state: ObjectState): void {
    (state as ReconcileState).reconciled = undefined;
  }

  /** Our write's answer to the reconciled object, laid over the store until the watch brings it. */
  wrote(answer: KubeObject): void {
    this.wiring.writes.wrote(answer);
  }
}

type FreshClient = Parameters<typeof freshBody>[0]["client"];

/** An object to wake: by name, and uid when known (an owner reference carries it). */
export interface WakeTarget {
  name: string;
  namespace?: string | undefined;
  uid?: string | undefined;
}
