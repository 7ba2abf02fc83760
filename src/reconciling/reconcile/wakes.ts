// The wakes of on.reconcile: an event of a resource that a reconcile owns or watches runs the
// reconcile of the objects it maps to (the controller ownerReference's owner; a `watches` entry's
// map). They ride along the resource's own consumer (its reconciler, handler-less when only
// reconciles read it): `withWakes` is what streams/ is handed for the resource. runtime/ wires it.
// An owner's wake goes through the resource's echoes (caching/own-echoes.ts) when it has them: the
// echo of a blind write the owner's own reconcile made (echo-scope.ts) wakes nothing.

import { parseApiVersion, parseSelector, type KubeObject, type Resource } from "../../kube/index.ts";
import type { ResourceSelector } from "../../kube/index.ts";
import { selectorMatches, type ReconcileSpec, type Registry } from "../../declaring/index.ts";
import type { Logger } from "../../util/index.ts";
import type { WatchEvent } from "../../watching/index.ts";
import type { Reconciler } from "../reconciler.ts";
import type { OwnEchoes, StoreChange } from "../../caching/index.ts";

/** A store's changes as they are written (caching/'s Store). */
type ChangesOf = { subscribe(listener: (change: StoreChange) => void): () => void };

/** What a stream hands its events to (streams/'s EventConsumer): a reconciler, with its wakes. */
export type WakingConsumer = Pick<Reconciler, "accept" | "settled">;

/** Whether `resource` is one of `selectors`. */
export function named(selectors: readonly ResourceSelector[], resource: Resource): boolean {
  return selectors.some((selector) => selectorMatches(parseSelector(selector), resource));
}

/** One wake route: events of `from` run the reconcile of `to`'s objects that `targets` names. */
interface WakeRoute {
  to: Reconciler;
  /** An `owns` route (its wakes go through the echoes), not a `watches` one (a watched object's echo wakes). */
  owned: boolean;
  targets(object: KubeObject): Target[];
}

type Target = { name: string; namespace?: string | undefined; uid?: string | undefined };

/** The consumer of `resource`'s events, with the wakes its events cause for the reconciles that own or watch it. */
export function withWakes(
  resource: Resource, consumer: Reconciler, reconcilers: Map<Resource, Reconciler>, registry: Registry,
  logger: Logger, echoes?: OwnEchoes, store?: ChangesOf,
): WakingConsumer {
  const routes = wakeRoutes(resource, reconcilers, registry, logger);
  if (routes.length === 0) return consumer;
  if (store) wakeKeysLeft(store, routes);
  return {
    accept(event: WatchEvent): void {
      consumer.accept(event);
      if (event.type === "relist-start" || event.type === "relist-done") return;
      // A relist's (or start-up's) children wake their owners as re-checks, behind news (queueing/lines.ts).
      const low = event.type === "listed";
      for (const route of routes) {
        for (const meant of route.targets(event.object)) {
          // A child of an older owner of the name, gone (the garbage collector's, most often), wakes the object now
          // of that name: it may have taken that child for its own while the watch lagged (controller-runtime wakes
          // by name alone). Its other events wake only the owner its reference's uid names.
          const target = event.type === "deleted" ? { ...meant, uid: undefined } : meant;
          const wake = () => route.to.wake(target, low);
          if (echoes && route.owned) echoes.route(event.type, event.object, target.uid, wake);
          else wake();
        }
      }
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
    if (named(spec.owns, resource)) routes.push({ to, owned: true, targets: (object) => ownersOf(object, parent) });
    for (const watched of spec.watches) {
      if (!named([watched.selector], resource)) continue;
      routes.push({ to, owned: false, targets: mapped(watched, parent, spec, logger, to) });
    }
  }
  return routes;
}

/**
 * The keys an object's previous state gave and its new one does not are woken too, as controller-runtime maps the
 * old object and the new: a child that left its controller owner (its reference removed, or moved to another)
 * wakes the owner it left, which may have to make it again; a watched object relabelled from one app to another
 * wakes both. Read off the store's change, which holds the body a put replaced: nothing is kept per object.
 */
function wakeKeysLeft(store: ChangesOf, routes: readonly WakeRoute[]): void {
  store.subscribe(({ type, object, previous }) => {
    if (type !== "put" || previous === undefined) return;
    for (const route of routes) {
      // Most changes of a child keep its owner: no map of either state to make.
      if (route.owned && controllerUid(previous) === controllerUid(object)) continue;
      const before = route.targets(previous);
      if (before.length === 0) continue;
      const now = route.targets(object);
      for (const left of before) if (!now.some((key) => sameKey(key, left))) route.to.wake(left, false);
    }
  });
}

function sameKey(a: Target, b: Target): boolean {
  return a.name === b.name && a.namespace === b.namespace && a.uid === b.uid;
}

function controllerUid(object: KubeObject): string | undefined {
  return controllerOf(object)?.uid;
}

/** The owner reference marked controller, if any. */
function controllerOf(object: KubeObject): OwnerReference | undefined {
  const refs = object.metadata.ownerReferences as unknown as OwnerReference[] | undefined;
  return refs?.find((ref) => ref.controller === true);
}

/** The controller owner of `object` when it is of `parent`'s kind and group. */
function ownersOf(object: KubeObject, parent: Resource): { name: string; namespace?: string; uid?: string }[] {
  const owner = controllerOf(object);
  if (!owner || owner.kind !== parent.kind || parseApiVersion(owner.apiVersion).group !== parent.group) return [];
  const namespace = parent.namespaced ? object.metadata.namespace : undefined;
  return [{ name: owner.name, uid: owner.uid, ...(namespace ? { namespace } : {}) }];
}

/**
 * A `watches` entry's map, its keys defaulting to the object's namespace; a throwing map is logged, not fatal.
 * It reads the cache of `to`'s reconcile, made when it asks (most maps read the watched object alone).
 */
function mapped(
  watched: ReconcileSpec["watches"][number], parent: Resource, spec: ReconcileSpec, logger: Logger, to: Reconciler,
): (object: KubeObject) => Target[] {
  let warned = false; // said once per map: it maps every event the same way
  return (object) => {
    let keys: ReturnType<typeof watched.map>;
    const failed = (error: unknown) =>
      logger.error(`on.reconcile "${spec.id}": a watches map failed`, { name: object.metadata.name, error });
    try {
      const namespace = object.metadata.namespace;
      const tools = { get cache() { return to.reconciling!.cacheFor(namespace); } };
      keys = watched.map(object as never, tools);
    } catch (error) {
      failed(error);
      return [];
    }
    const list = keys == null ? [] : Array.isArray(keys) ? keys : [keys];
    const home = parent.namespaced ? object.metadata.namespace : undefined;
    // An async map's rejection would end the process (an unhandled rejection): it is logged as a failed map.
    if (keys instanceof Promise) keys.catch((error: unknown) => failed(error));
    if (!list.every(isKey)) {
      logger.error(`on.reconcile "${spec.id}": a watches map returned ${shownKeys(keys)}: return an ObjectKey ` +
        "({ name, namespace? }), a list of them, or nothing, at once (a map cannot be async: read its cache)",
      { name: object.metadata.name });
    }
    // A cluster-scoped object is named by its name alone: a key's namespace (the watched object's, passed on by a map
    // written for any parent) names no other one, as controller-runtime's cache ignores it there.
    const targets = list.filter(isKey)
      .map((key) => ({ name: key.name, namespace: parent.namespaced ? key.namespace ?? home : undefined }));
    if (parent.namespaced && !warned) warned = saidHomeless(targets, object, parent, spec, logger);
    return targets;
  };
}

/**
 * A cluster-scoped watched object has no namespace to lend its keys: a key of a namespaced resource without one
 * names no object. Warns (true) at the first such key.
 */
function saidHomeless(
  targets: { name: string; namespace?: string | undefined }[], object: KubeObject, parent: Resource,
  spec: ReconcileSpec, logger: Logger,
): boolean {
  const homeless = targets.find((target) => !target.namespace);
  if (!homeless) return false;
  logger.warn(`on.reconcile "${spec.id}": a watches map gave a key without a namespace; ` +
    `${parent.plural} are namespaced, so it wakes nothing (give each key its namespace)`, {
    watched: object.metadata.name, key: homeless.name,
  });
  return true;
}

function isKey(key: unknown): key is { name: string; namespace?: string } {
  return typeof key === "object" && key !== null && typeof (key as { name?: unknown }).name === "string" &&
    (key as { name: string }).name !== "";
}

/** What a map returned, as its error shows it. */
function shownKeys(keys: unknown): string {
  if (keys instanceof Promise) return "a Promise";
  try {
    return JSON.stringify(keys) ?? String(keys);
  } catch {
    return String(keys);
  }
}

/** The fields of an ownerReference a wake reads. */
interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}
