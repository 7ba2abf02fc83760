// What a handler sees of `ctx.api` (and activities of theirs): the interface only. handling/api.ts
// implements it over kube/'s client; declaring it here keeps the public types free of that engine.

import type { KubeObject, PatchType, Resource } from "../kube/index.ts";
import type { ResourceToken, TargetObject } from "./resource.ts";

/**
 * A resource as handlers name it: a selector ("configmaps", "apps/v1/deployments"), a typed token
 * (`resource.configmaps`, `resource<Widget>("widgets.example.com/v1")`), or a resolved Resource.
 */
export type ResourceRef = string | ResourceToken<any> | Resource;

/**
 * What `api.watch()` yields: the watcher's vocabulary. The first LIST, and every relist after (e.g. once the
 * server answered 410 Gone), is framed by relist-start and relist-done, its objects `listed`; then the changes.
 */
export type ApiWatchEvent<T extends object = KubeObject> =
  | { type: "relist-start" }
  | { type: "listed" | "added" | "modified" | "deleted"; object: T }
  | { type: "relist-done"; resourceVersion: string };

/** What every `ctx.api` call takes. */
export interface Call {
  /** Combined with the handler's signal: either aborts the call. */
  signal?: AbortSignal;
}
/** What a `ctx.api` call that names a namespaced object (or lists them) takes. */
export interface Where extends Call {
  /** Default: the handled object's namespace (for namespaced resources); `null` in list and watch: all namespaces. */
  namespace?: string | null;
}

/**
 * `ctx.api`: the operator's own client for any resource, bound to the handler's signal (its timeout's
 * too) and namespace (docs/children.md). A request the server refuses throws an ApiError (its `code`,
 * `reason` and Status): a missing object is a 404 (the testing kit's `get` answers `undefined` instead).
 */
export interface Api {
  /** The field manager of this operator's applies and writes (stable across replicas and restarts). */
  readonly fieldManager: string;
  /** The object; one that does not exist throws an ApiError with `code` 404. */
  get<S extends ResourceRef>(resource: S, name: string, o?: Where): Promise<TargetObject<S>>;
  /** Every object (all pages, 500 a page) matching the selectors. */
  list<S extends ResourceRef>(
    resource: S, o?: Where & { labelSelector?: string; fieldSelector?: string },
  ): Promise<TargetObject<S>[]>;
  /** Creates `object` (its apiVersion and kind name the resource; the namespace defaults as for get). */
  create<T extends KubeObject>(object: T, o?: Call): Promise<T>;
  /** A merge patch by default; `type` "json" or "strategic" for the others. */
  patch<S extends ResourceRef>(
    resource: S, name: string, patch: unknown,
    o?: Where & { type?: Exclude<PatchType, "apply">; subresource?: "status" },
  ): Promise<TargetObject<S>>;
  /**
   * Server-side apply of `object` (apiVersion, kind, metadata.name required) as this operator's
   * field manager; conflicts with other managers throw ApplyConflictError naming the fields. Resolves to
   * the server's answer: the whole object, other managers' fields too.
   */
  apply<T extends KubeObject>(
    object: T, o?: Call & { force?: boolean; fieldManager?: string; subresource?: "status" },
  ): Promise<T>;
  delete(
    resource: ResourceRef, name: string, o?: Where & { propagationPolicy?: "Foreground" | "Background" | "Orphan" },
  ): Promise<void>;
  /** LIST then WATCH, reconnecting as the operator's own watches do, until the signal aborts or the loop breaks. */
  watch<S extends ResourceRef>(
    resource: S, o?: Where & { labelSelector?: string },
  ): AsyncIterable<ApiWatchEvent<TargetObject<S>>>;
}
