// What `on.reconcile` needs of the runtime: the stores its reconciles may read (kept with bodies),
// this operator's writes laid over them (fed by ctx.api and by the reconciler's own writes), and
// each reconciled resource's wiring from the settings (reconciling/reconcile/reconcile-mode.ts), and
// under sharding which resources every replica watches whole (the children: wholeUnderSharding). The
// wakes (an owned or watched object's event runs its reconcile) are reconciling/'s (wakes.ts); the echoes
// of each owned resource (caching/own-echoes.ts) are kept here, one per resource, for both the wakes and
// the reconciles' blind writes (reconciling/reconcile/echo-scope.ts), unless reconcile.quietEchoes is off.

import { OwnEchoes, OwnWrites, type Store } from "../caching/index.ts";
import {
  parseApiVersion, parseSelector, type KubeObject, type Resource, type ResourceSelector,
} from "../kube/index.ts";
import { RegistrationError, selectorMatches, type Registry, type ResourceRef } from "../declaring/index.ts";
import { lookupAmong, type CachedResource, type WriteListener } from "../handling/index.ts";
import { named, type EchoBook, type EchoBooks, type ReconcileWiring } from "../reconciling/index.ts";
import { namespaceMatcher, resourceNamespaces, type ResourceSettings, type Settings } from "../config/index.ts";

/** The resources ctx.cache may read, with our writes to them; ctx.api tells it of every write. */
export class CachedResources implements WriteListener {
  private readonly entries: CachedResource[] = [];
  /** The owned resources' echoes (`owned` at add), by resource. */
  private readonly echoes = new Map<Resource, OwnEchoes>();
  private quiet = true;

  /** `owned`: an on.reconcile owns it (its echoes are kept); `covers`: the namespaces its watches serve. */
  add(resource: Resource, store: Store, owned = false, covers?: (namespace: string) => boolean): void {
    this.entries.push({ resource, store, writes: new OwnWrites(store), ...(covers ? { covers } : {}) });
    if (owned) this.echoes.set(resource, new OwnEchoes());
  }

  /** `reconcile.quietEchoes`: false, every echo wakes (no echoes are kept, no write is blind). */
  quietEchoes(on: boolean): void {
    this.quiet = on;
  }

  /** The echoes of an owned resource, for its wakes (reconciling/'s withWakes); none when echoes wake. */
  echoesOf(resource: Resource): OwnEchoes | undefined {
    return this.quiet ? this.echoes.get(resource) : undefined;
  }

  /** The owned resources as the reconciles' writes and reads name them (reconciling/'s echo-scope.ts). */
  echoBooks(): EchoBooks | undefined {
    if (!this.quiet || this.echoes.size === 0) return undefined;
    const lookup = lookupAmong(this.entries);
    const book = (entry: CachedResource | undefined): EchoBook | null => {
      const echoes = entry && this.echoes.get(entry.resource);
      return echoes ? { echoes, namespaced: entry.resource.namespaced } : null;
    };
    /** an owned resource named by another version (ctx.api reads any version; the cache keeps one) */
    const ownedOfAnyVersion = (ref: ResourceRef): CachedResource | undefined => {
      const wanted = { ...parseSelector(ref as ResourceSelector), version: undefined };
      return this.entries.find((entry) => this.echoes.has(entry.resource) && selectorMatches(wanted, entry.resource));
    };
    return {
      ofRef: (ref: ResourceRef) => {
        if (typeof ref === "object" && "namespaced" in ref) return book(this.get(ref));
        try {
          const entry = lookup(ref) ?? ownedOfAnyVersion(ref);
          return entry ? book(entry) : null; // a resource the reconciles neither own nor read from the cache
        } catch {
          return undefined; // a name that does not parse: counted as a read of everything
        }
      },
      ofObject: (object: KubeObject) => {
        const { apiVersion, kind } = object ?? {};
        if (!apiVersion || !kind) return undefined;
        const { group } = parseApiVersion(apiVersion);
        return book(this.entries.find((entry) => entry.resource.kind === kind && entry.resource.group === group));
      },
    };
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

/**
 * Under sharding, the resources every replica watches whole: what the reconciles own or watch. A child's uid
 * (or namespace) hashes to a shard of its own, but its event must wake its parent on the replica that owns the
 * PARENT's shard, and ctx.cache must hold every child there; the wake itself runs only parents of shards owned
 * here (Reconciler.wake: only objects this replica's streams delivered). Such a resource must have no worker of its
 * own (handlers, daemons, timers, an index, a reconcile): those run on their own object's shard, and one whole
 * stream cannot feed both. Refused with a RegistrationError that names it and what to do.
 */
export function wholeUnderSharding(registry: Registry, resources: readonly Resource[]): Set<Resource> {
  const children = [...registry.reconciles.owned(), ...registry.reconciles.watched()];
  const whole = new Set(resources.filter((resource) => named(children, resource)));
  for (const resource of whole) {
    const reconciled = registry.reconciles.forResource(resource);
    const own = [
      ...registry.forResource(resource).map((h) => `on.${h.kind} "${h.id}"`),
      ...registry.backgroundFor(resource).map((b) => `on.${b.kind} "${b.id}"`),
      ...registry.indexes.filter((i) => selectorMatches(i.wanted, resource)).map((i) => `on.index "${i.id}"`),
      ...(reconciled ? [`on.reconcile "${reconciled.id}"`] : []),
    ];
    if (own.length === 0) continue;
    throw new RegistrationError(
      `${resource.plural} is owned or watched by an on.reconcile, and has ${own.join(", ")} of its own: under ` +
        "sharding every replica watches an on.reconcile's children whole (their parents may be in any shard), so " +
        "they cannot have handlers of their own; move that work into the parent's reconcile, or run one active " +
        "replica (peering) instead",
    );
  }
  return whole;
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
    backoff: { baseMs: backoff.initial * 1000, maxMs: backoff.max * 1000 },
    // Off, a read after the write does not see it: the echo is what shows it, and must wake (docs/reconcile.md).
    ...(readOwnWrites ? { echoes: cached.echoBooks() } : {}),
  };
}

function sameResource(a: Resource, b: Resource): boolean {
  return a.group === b.group && a.plural === b.plural;
}

/**
 * The namespaces a resource's watches serve, as ctx.cache checks a read's: its own `resources:` namespaces when it
 * has them, else the operator's; undefined when that is every namespace.
 */
export function namespacesServed(
  settings: Settings, config: ResourceSettings | undefined,
): ((namespace: string) => boolean) | undefined {
  const namespaces = resourceNamespaces(config?.namespaces) ?? settings.namespaces;
  if (namespaces.include.length === 0 && namespaces.exclude.length === 0) return undefined;
  return namespaceMatcher(namespaces.include, namespaces.exclude);
}
