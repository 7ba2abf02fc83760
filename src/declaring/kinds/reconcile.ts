// `on.reconcile`: the level-triggered kind of handler (controller-runtime's Reconciler, kube-rs's
// Controller), beside Kopf's edge-triggered ones. One function brings the world to what the object
// asks for, from whatever state it finds; kobun calls it again when the object changes, when
// anything it owns or watches changes, when it asked to be called back, and after a failure.
// What it reads it reads from the operator's cache (`ctx.cache`), never staler than the
// operator's own writes. This file is the declaration only (its registrations are kept by
// reconciles.ts): the engine is reconciling/reconcile/.

import { parseSelector, type KubeObject, type ResourceSelector } from "../../kube/index.ts";
import type { Aliases } from "../aliases.ts";
import type { ReconcileTarget, TargetObject } from "../resource.ts";
import type { ObjectContext, Patch } from "../types.ts";
import type { IndexKey } from "../indexes.ts";
import {
  checkOptionNames, everyKeyOf, RegistrationError, selectorName, shownSelector, type Wanted,
} from "../registration.ts";

/** One object of a reconciled resource, by name (and namespace, for namespaced resources). */
export interface ObjectKey {
  name: string;
  namespace?: string;
}

/**
 * Objects of another resource that matter to reconciled objects: `map` names the reconciled
 * objects to run again when one of them changes (controller-runtime's EnqueueRequestsFromMapFunc,
 * kube-rs's `watches`). E.g. a ConfigMap → the apps that mount it. `map` gets the watched object typed
 * by `resource` (a token's type, a built-in kind's). Its second argument's `cache`
 * is the reconcile's `ctx.cache` (its namespace the watched object's; none for a cluster-scoped
 * one: a `get` of a namespaced resource names its namespace), for a map that looks the
 * reconciled objects up instead of reading their names off the watched one:
 * `map: (secret, { cache }) => cache.list(Apps).filter((app) => app.spec.secretName === secret.metadata.name)
 *   .map((app) => ({ name: app.metadata.name! }))`.
 */
export interface WatchedResource<S extends ReconcileTarget<any> = ReconcileTarget<any>> {
  resource: S;
  map: (object: TargetObject<S>, tools: MapTools) => ObjectKey | readonly ObjectKey[] | undefined | null;
}

/** What a `watches` map may read besides the watched object. */
export interface MapTools {
  /** What the operator watches, from memory, as `ctx.cache` reads it. */
  readonly cache: Cache;
}

/** `ctx.cache.list`'s selection; every field narrows it. */
export interface CacheListOptions {
  /** Only this namespace's objects. Default: the handled object's (namespaced resources); null: every one watched. */
  namespace?: string | null;
  /** As a LIST's `labelSelector` ("app=web,tier!=db"). */
  labelSelector?: string;
  /**
   * Only the objects an index (`on.index` of this resource) keeps under `key` (a tuple compared by value).
   * An index follows the watch: an object created a moment ago is in it once the watch brings it.
   */
  index?: { id: string; key: IndexKey };
}

/**
 * What the operator watches, read from memory: no API request. Each read returns copies (change them
 * freely; no later read sees it; a write goes through `ctx.api`). Reading a resource the operator
 * does not watch throws, naming the resource and how to declare it (`owns`, `watches`, an index).
 */
export interface Cache {
  /** The object, or undefined. A namespaced resource's `namespace` defaults to the handled object's; none: throws. */
  get<S extends ReconcileTarget<any>>(
    resource: S, name: string, namespace?: string | null,
  ): TargetObject<S> | undefined;
  list<S extends ReconcileTarget<any>>(resource: S, options?: CacheListOptions): TargetObject<S>[];
}

/** What a reconcile function sees: the object as it is now, and the cache. */
export interface ReconcileContext<T extends object = KubeObject> extends ObjectContext<T> {
  /**
   * The object is being deleted and kobun holds it (`finalizer: true`): clean up and return; the
   * finalizer is released after a reconcile that returns without error while deleting.
   */
  deleting: boolean;
  /**
   * Changes written once the function returns, in one request each for the object and its status
   * (`patch.status`); `status.observedGeneration` is set for you when the status is written (when the resource
   * has a status subresource: without one, each status write changes the generation).
   */
  patch: Patch<T>;
  /** What the operator watches, from memory, never staler than this operator's own writes. */
  cache: Cache;
  /** Failed reconciles of this object in a row before this one (0 after a success, and after a PermanentError). */
  retry: number;
}

/**
 * Done (nothing), or run again after `requeueAfter` seconds (unless a change comes first); `requeueAfter: undefined`
 * is done too, so that `{ requeueAfter: due ? 30 : undefined }` reads as it runs.
 */
export type ReconcileResult = void | undefined | { requeueAfter: number | undefined };

/** A reconcile: brings the object's world to its spec; what it returns or throws decides when it runs again. */
export type ReconcileFn<T extends object = KubeObject> = (
  ctx: ReconcileContext<T>,
) => ReconcileResult | Promise<ReconcileResult>;

/**
 * Options of on.reconcile (docs/reconcile.md). `W` is the resources of `watches`, one per entry, inferred
 * from them: each `map` gets its own resource's objects (a token's type, a built-in kind's).
 */
export interface ReconcileOptions<
  T extends object = KubeObject, W extends readonly ReconcileTarget<any>[] = ReconcileTarget<any>[],
> {
  /**
   * Names it in logs, Events, errors and kobun_handler_runs_total's `handler` (controller_runtime_* metrics
   * name the resource). Default: the function's name, else "reconcile <resource>".
   */
  id?: string;
  /**
   * Children whose controller ownerReference points at a reconciled object run that object's
   * reconcile when they change (controller-runtime's `Owns`). Watched once each, shared.
   */
  owns?: readonly ReconcileTarget<any>[];
  /** Objects of other resources mapped to reconciled objects (controller-runtime's `Watches`). */
  watches?: { readonly [K in keyof W]: WatchedResource<W[K]> };
  /**
   * What it writes through `ctx.api` beside what it owns (a shared ledger, another team's object): `kobun
   * manifests` grants them as handlers' `children` (kubebuilder's RBAC markers); neither watched nor waking.
   */
  children?: readonly ReconcileTarget<any>[];
  /**
   * Which changes of the object itself run it: "generation" (default: `metadata.generation`,
   * labels, annotations, finalizers, the deletion mark; not status) or "any" (every version).
   */
  on?: "generation" | "any";
  /**
   * kobun holds the object with its finalizer and calls the function with `ctx.deleting` when it
   * is deleted, releasing it after a reconcile that succeeds. Default false: a deletion is only
   * another state (use owner references, and the garbage collector, for children).
   */
  finalizer?: boolean;
  /** Seconds one call may run before its signal aborts it (a failure, retried). Default: none. */
  timeout?: number;
  /** Runs only for objects it accepts; others are left alone (as the other handlers' `when`). */
  when?: (ctx: ObjectContext<T>) => boolean;
}

/** What the registry keeps of one `on.reconcile`. */
export interface ReconcileSpec {
  id: string;
  selector: ResourceSelector;
  wanted: Wanted;
  fn: ReconcileFn<any>;
  owns: readonly ResourceSelector[];
  children: readonly ResourceSelector[];
  watches: readonly { selector: ResourceSelector; map: WatchedResource["map"] }[];
  on: "generation" | "any";
  finalizer: boolean;
  timeout: number | undefined;
  when: ((ctx: ObjectContext<any>) => boolean) | undefined;
}

/** `owns` or `watches`: a list, each entry naming a resource as a selector or a token (as handlers' `children`). */
function checkTargets<E>(
  id: string, option: string, list: readonly E[] | undefined, target: (entry: E) => unknown,
): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) {
    const example = `[resource.configmaps, "apps/v1/deployments"]`;
    throw new RegistrationError(`on.reconcile "${id}": ${option} must be a list, e.g. ${example}`);
  }
  for (const entry of list) {
    const named = target(entry);
    try {
      parseSelector(named as ResourceSelector);
    } catch (error) {
      throw new RegistrationError(`on.reconcile "${id}": ${option}: ${(error as Error).message}`);
    }
  }
}

const OPTION_NAMES = everyKeyOf<ReconcileOptions>()(
  ["id", "owns", "watches", "children", "on", "finalizer", "timeout", "when"],
);

/** Checks the options as registration reads them; a bad one is a RegistrationError naming it. */
export function reconcileSpecOf(
  selector: ResourceSelector, fn: ReconcileFn<any>, options: ReconcileOptions<any>,
): ReconcileSpec {
  if (typeof fn !== "function") {
    throw new RegistrationError(`on.reconcile(${shownSelector(selector)}): the reconcile is not a function`);
  }
  checkOptionNames(`on.reconcile(${shownSelector(selector)})`, options, OPTION_NAMES);
  const id = options.id ?? (fn.name && fn.name !== "anonymous" ? fn.name : `reconcile ${selectorName(selector)}`);
  if (options.on !== undefined && options.on !== "generation" && options.on !== "any") {
    const given = JSON.stringify(options.on);
    throw new RegistrationError(`on.reconcile "${id}": on must be "generation" or "any", not ${given}`);
  }
  if (options.timeout !== undefined && !(options.timeout > 0)) {
    throw new RegistrationError(`on.reconcile "${id}": timeout must be a number of seconds above 0`);
  }
  checkTargets(id, "owns", options.owns, (owned) => owned);
  checkTargets(id, "children", options.children, (child) => child);
  checkTargets(id, "watches", options.watches, (watched) => {
    if (typeof watched?.map !== "function") {
      throw new RegistrationError(`on.reconcile "${id}": each of watches needs a resource and a map function`);
    }
    return watched.resource;
  });
  return {
    id, selector, wanted: parseSelector(selector), fn,
    owns: [...(options.owns ?? [])] as ResourceSelector[],
    children: [...(options.children ?? [])] as ResourceSelector[],
    watches: (options.watches ?? []).map((w) => ({ selector: w.resource as ResourceSelector, map: w.map })),
    on: options.on ?? "generation",
    finalizer: options.finalizer ?? false,
    timeout: options.timeout,
    when: options.when,
  };
}

/** on.reconcile, recording into `store` (whose `reconciles` refuses a second one per resource). */
export function reconcileOn(store: {
  reconciles: { add(selector: ResourceSelector, fn: ReconcileFn<any>, options: ReconcileOptions<any>): unknown };
  aliases: Aliases;
}) {
  return {
    reconcile: (selector: ResourceSelector, fn: ReconcileFn, options: ReconcileOptions = {}) => {
      store.reconciles.add(selector, fn, options);
      store.aliases.note(selector);
      return fn;
    },
  };
}
