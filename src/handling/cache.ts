// `ctx.cache`: what the operator watches, read from its stores (caching/) with its own writes laid
// over them (caching/own-writes.ts), so a read is never staler than this operator's writes and
// never an API request. A resource the operator does not watch is an error that says how to
// watch it, never a silent GET: a cache that quietly reads through hides the very staleness it
// exists to rule out. Namespaces default as `ctx.api`'s do: the handled object's, for a
// namespaced resource; `null` asks for every namespace watched.

import { selectorMatches, type Cache, type CacheListOptions, type ReconcileTarget } from "../declaring/index.ts";
import { parseSelector, resourceName, type Resource, type ResourceSelector } from "../kube/index.ts";
import type { KnownObjects, OwnWrites } from "../caching/index.ts";

/** One watched resource as the cache reads it. */
export interface CachedResource {
  resource: Resource;
  store: KnownObjects;
  writes: OwnWrites;
}

/** The resources the cache may read, by selector or token; undefined: not watched. */
export type CacheLookup = (target: ReconcileTarget<any>) => CachedResource | undefined;

/** Finds a target among `cached` the way handlers name resources (plural, kind, short name, group, version). */
export function lookupAmong(cached: readonly CachedResource[]): CacheLookup {
  const found = new Map<ReconcileTarget<any>, CachedResource | undefined>();
  return (target) => {
    if (found.has(target)) return found.get(target);
    const wanted = parseSelector(target as ResourceSelector);
    const hit = cached.find((entry) => selectorMatches(wanted, entry.resource));
    found.set(target, hit);
    return hit;
  };
}

export class CacheView implements Cache {
  constructor(
    private readonly lookup: CacheLookup,
    /** The handled object's namespace: the default of namespaced reads. */
    private readonly namespace: string | undefined,
    /** Says how to make a resource readable, for the error (e.g. "add it to owns or watches"). */
    private readonly howToDeclare: string,
  ) {}

  get(target: ReconcileTarget<any>, name: string, namespace?: string | null): any {
    const cached = this.need(target);
    return cached.writes.get(name, this.namespaceOf(cached.resource, namespace));
  }

  list(target: ReconcileTarget<any>, options: CacheListOptions = {}): any[] {
    const cached = this.need(target);
    if (options.index !== undefined) {
      throw new Error(`ctx.cache.list(${resourceName(cached.resource)}): the index option is not supported yet`);
    }
    const namespace = this.namespaceOf(cached.resource, options.namespace);
    return cached.writes.list({
      ...(namespace !== undefined ? { namespace } : {}),
      ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
    });
  }

  private need(target: ReconcileTarget<any>): CachedResource {
    const cached = this.lookup(target);
    if (cached) return cached;
    const named = typeof target === "string" ? target : JSON.stringify({ ...target });
    throw new Error(`ctx.cache cannot read ${named}: the operator does not watch it; ${this.howToDeclare}`);
  }

  private namespaceOf(resource: Resource, given: string | null | undefined): string | undefined {
    if (!resource.namespaced || given === null) return undefined;
    return given ?? this.namespace;
  }
}
