// What `on.reconcile` needs of the runtime: the stores its reconciles may read (kept with bodies),
// this operator's writes laid over them (fed by ctx.api and by the reconciler's own writes), each
// reconciled resource's wiring (reconciling/reconcile-mode.ts), and the wakes: an event of a
// resource that a reconcile owns or watches runs the reconcile of the objects it maps to (the
// controller ownerReference's owner; a `watches` entry's map). A resource only reconciles read
// is watched like any other: its stream's consumer is its (handler-less) reconciler, and the
// wakes ride along (`withWakes`).

import { OwnWrites, type Store } from "../caching/index.ts";
import type { ResourceSelector } from "../kube/index.ts";
import { parseApiVersion, parseSelector, type KubeObject, type Resource } from "../kube/index.ts";
import { selectorMatches, type ReconcileSpec, type Registry } from "../declaring/index.ts";
import { lookupAmong, type CachedResource, type WriteListener } from "../handling/index.ts";
import type { Reconciler, ReconcileWiring } from "../reconciling/index.ts";
import type { Settings } from "../config/index.ts";
import type { Logger } from "../util/index.ts";
import type { EventConsumer } from "../streams/index.ts";
import type { WatchEvent } from "../watching/index.ts";

/** The resources ctx.cache may read, with our writes to them; ctx.api tells it of every write. */
export class CachedResources implements WriteListener {
  private readonly entries: CachedResource[] = [];

  add(resource: Resource, store: Store): void {
    this.entries.push({ resource, store, writes: new OwnWrites(store) });
  }

  get(resource: Resource): CachedResource | undefined {
    return this.entries.find((entry) => sameResource(entry.resource, resource));
  }

  get all(): readonly CachedResource[] {
    return this.entries;
  }

  wrote(resource: Resource, answer: KubeObject): void {
    this.get(resource)?.writes.wrote(answer);
  }

  deleted(resource: Resource, name: string, namespace: string | null, answer: KubeObject | undefined): void {
    this.get(resource)?.writes.deleted(name, namespace, answer);
  }
}

/**
 * The selectors whose stores must keep bodies: what the reconciles may read (their resources, what they own
 * and watch, and the indexes' resources, for `ctx.cache.list({ index })`); none without a reconcile.
 */
export function readByReconciles(registry: Registry): ResourceSelector[] {
  if (registry.reconciles.specs.length === 0) return [];
  return [...registry.reconciles.selectors(), ...registry.indexes.map((index) => index.selector)];
}

/** Whether `resource` is one of `selectors`. */
export function named(selectors: readonly ResourceSelector[], resource: Resource): boolean {
  return selectors.some((selector) => selectorMatches(parseSelector(selector), resource));
}

/** A reconciled resource's wiring, from the cached resources and the settings. */
export function reconcileWiringOf(resource: Resource, cached: CachedResources, settings: Settings): ReconcileWiring {
  const own = cached.get(resource);
  if (!own) throw new Error(`${resource.plural} is reconciled, but its store was not kept (readByReconciles)`);
  const { readOwnWrites, catchUp, backoff } = settings.reconcile;
  // Off, ctx.cache reads the stores as they are: an informer's cache. The reconciled object keeps our
  // writes over it: the cycle drops a body older than its own write (life.ts), and with it the wake or requeue.
  const asIs = (entry: CachedResource): CachedResource => ({
    ...entry, writes: new OwnWrites(entry.store, { enabled: false }),
  });
  const reads = readOwnWrites ? cached.all : cached.all.map(asIs);
  return {
    store: own.store, writes: own.writes, cache: lookupAmong(reads), readOwnWrites, catchUpMs: catchUp * 1000,
    backoff: { baseMs: backoff.initial * 1000, maxMs: backoff.max * 1000 }, sharded: settings.sharding.enabled,
  };
}

/** One wake route: events of `from` run the reconcile of `to`'s objects that `targets` names. */
interface WakeRoute {
  to: Reconciler;
  targets(object: KubeObject): { name: string; namespace?: string | undefined; uid?: string | undefined }[];
}

/** The consumer of `resource`'s events, with the wakes its events cause for the reconciles that own or watch it. */
export function withWakes(
  resource: Resource, consumer: Reconciler, reconcilers: Map<Resource, Reconciler>, registry: Registry,
  logger: Logger,
): EventConsumer {
  const routes = wakeRoutes(resource, reconcilers, registry, logger);
  if (routes.length === 0) return consumer;
  return {
    accept(event: WatchEvent): void {
      consumer.accept(event);
      if (event.type === "relist-start" || event.type === "relist-done") return;
      // A relist's (or start-up's) children wake their owners as re-checks, behind news (queueing/lines.ts).
      const low = event.type === "listed";
      for (const route of routes) for (const target of route.targets(event.object)) route.to.wake(target, low);
    },
    settled: () => consumer.settled(),
  };
}

function wakeRoutes(
  resource: Resource, reconcilers: Map<Resource, Reconciler>, registry: Registry, logger: Logger,
): WakeRoute[] {
  const routes: WakeRoute[] = [];
  for (const [parent, to] of reconcilers) {
    const spec = registry.reconciles.forResource(parent);
    if (!spec) continue;
    if (named(spec.owns, resource)) routes.push({ to, targets: (object) => ownersOf(object, parent) });
    for (const watched of spec.watches) {
      if (named([watched.selector], resource)) routes.push({ to, targets: mapped(watched, parent, spec, logger) });
    }
  }
  return routes;
}

/** The controller owner of `object` when it is of `parent`'s kind and group. */
function ownersOf(object: KubeObject, parent: Resource): { name: string; namespace?: string; uid?: string }[] {
  const refs = (object.metadata.ownerReferences ?? []) as unknown as OwnerReference[];
  const owner = refs.find((ref) => ref.controller === true);
  if (!owner || owner.kind !== parent.kind || parseApiVersion(owner.apiVersion).group !== parent.group) return [];
  const namespace = parent.namespaced ? object.metadata.namespace : undefined;
  return [{ name: owner.name, uid: owner.uid, ...(namespace ? { namespace } : {}) }];
}

/** A `watches` entry's map, its keys defaulting to the object's namespace; a throwing map is logged, not fatal. */
function mapped(
  watched: ReconcileSpec["watches"][number], parent: Resource, spec: ReconcileSpec, logger: Logger,
): WakeRoute["targets"] {
  return (object) => {
    let keys: ReturnType<typeof watched.map>;
    try {
      keys = watched.map(object as never);
    } catch (error) {
      logger.error(`on.reconcile "${spec.id}": a watches map failed`, { name: object.metadata.name, error });
      return [];
    }
    const list = keys == null ? [] : Array.isArray(keys) ? keys : [keys];
    const home = parent.namespaced ? object.metadata.namespace : undefined;
    return list.map((key) => ({ name: key.name, namespace: key.namespace ?? home }));
  };
}

/** The fields of an ownerReference a wake reads. */
interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

function sameResource(a: Resource, b: Resource): boolean {
  return a.group === b.group && a.plural === b.plural;
}
