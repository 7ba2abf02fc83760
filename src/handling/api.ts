// The API client that every handler finds in its context as `ctx.api`: get, list, create,
// patch, apply, delete and watch of any resource, with the operator's own KubeClient (its
// credentials, TLS, request deadlines and retries), the handler's `signal` wired into every
// call, and errors that carry the Kubernetes Status (ApiError, ApplyConflictError).
//
// Writes to the handled object itself are not changes made by others: what such a write
// changed in the object's essence (spec, labels, annotations) goes into the cycle's new
// last-handled state (never into its PATCH: the write has landed, and sending it again would
// put it back over a newer value), so the watch's copy of it does not run the update handlers
// again (no self-triggered loop). Only the paths the write names are taken (own-change.ts):
// another client's change made meanwhile shows in the answer too, but it stays that client's,
// an ordinary change. Writes to any other object (children) are
// ordinary changes: that object's own handlers, if any, do see them.
//
// Must never keep a request going after the handler's signal aborted, nor write anywhere
// but through the KubeClient.

import type { KubeClient } from "../kube/index.ts";
import type { Api, ApiWatchEvent, Call, ResourceRef, TargetObject, Where } from "../declaring/index.ts";
import { apiVersionOf, parseApiVersion, type KubeObject, type PatchType, type Resource,
  type ResourceSelector } from "../kube/index.ts";
import { linkedSignal } from "../util/index.ts";
import { changedBy, namedBy, ownChange } from "./own-change.ts";
import { combinePatches } from "./essence.ts";
import { refuseNamespacedOwner } from "./owners.ts";

/** How the runtime opens a watch (watching/ lives above handling/, so it is passed in). */
export type WatchFn = (
  resource: Resource, o: { namespace: string | null; labelSelector?: string }, signal: AbortSignal,
) => AsyncIterable<ApiWatchEvent>;

export interface ApiClientOptions {
  client: KubeClient;
  /** Default "kobun". */
  fieldManager?: string;
  watch?: WatchFn;
  /** Hears every write's answer: the caches lay our writes over their stores (caching/own-writes.ts). */
  written?: WriteListener;
}

/** Told of each write handlers make through ctx.api, with the server's answer. */
export interface WriteListener {
  wrote(resource: Resource, answer: KubeObject): void;
  deleted(resource: Resource, name: string, namespace: string | null, answer: KubeObject | undefined): void;
}

/** The handled object a bound Api knows about: what its writes to it changed is absorbed into `written`. */
export interface BoundObject {
  resource: Resource;
  body: KubeObject;
  /**
   * What the handlers' own writes changed in the object's essence, as one merge patch: the cycle
   * puts it into the new last-handled state, and never sends it (issue 30, defect 6). Absent
   * where no last-handled state is stored (on.event handlers, timers).
   */
  written?: Record<string, any>;
  /** Told the server's answer to every write to the object (/status too): the newest version known. */
  wrote?(after: KubeObject): void;
}

/** One per operator; `bind()` gives each handler call its own Api. */
export class ApiClient {
  readonly fieldManager: string;
  constructor(private readonly options: ApiClientOptions) {
    this.fieldManager = options.fieldManager ?? "kobun";
  }

  bind(self: BoundObject, signal: AbortSignal): Api {
    return new BoundApi(this.options, this.fieldManager, self, signal, { latest: self.body });
  }
}

/**
 * `api` on `signal` instead of the one it was bound with (a handler's own, which its timeout aborts),
 * the same in all else: what one of them writes of the handled object, the other knows.
 */
export function apiOn(api: Api, signal: AbortSignal): Api {
  return api instanceof BoundApi ? api.on(signal) : api;
}

class BoundApi implements Api {
  constructor(
    private readonly options: ApiClientOptions,
    readonly fieldManager: string,
    private readonly self: BoundObject,
    private readonly signal: AbortSignal,
    /** The newest version of the handled object this Api wrote (or saw), to absorb only our own changes. */
    private readonly seen: { latest: KubeObject },
  ) {}

  on(signal: AbortSignal): BoundApi {
    return new BoundApi(this.options, this.fieldManager, this.self, signal, this.seen);
  }

  async get<S extends ResourceRef>(ref: S, name: string, o?: Where): Promise<TargetObject<S>> {
    const resource = await this.resolve(ref, o);
    const namespace = this.namespaceOf(resource, o);
    return this.call(o, (signal) =>
      this.options.client.get(resource, namespace, name, { signal }),
    ) as Promise<TargetObject<S>>;
  }

  async list<S extends ResourceRef>(
    ref: S, o?: Where & { labelSelector?: string; fieldSelector?: string },
  ): Promise<TargetObject<S>[]> {
    const resource = await this.resolve(ref, o);
    const namespace = resource.namespaced && o?.namespace === null ? null : this.namespaceOf(resource, o);
    const list = await this.call(o, (signal) =>
      this.options.client.listAll(resource, {
        namespace, labelSelector: o?.labelSelector, fieldSelector: o?.fieldSelector, signal,
      }),
    );
    return list.items as TargetObject<S>[];
  }

  async create<T extends KubeObject>(object: T, o?: Call): Promise<T> {
    const resource = await this.resolveObject(object, o);
    await refuseNamespacedOwner("create", object, resource, this.resolver(o), this.options.client);
    const namespace = this.namespaceOf(resource, { namespace: object.metadata?.namespace });
    const created = await this.call(o, (signal) =>
      this.options.client.create<T>(resource, namespace, object, { signal, fieldManager: this.fieldManager }),
    );
    this.options.written?.wrote(resource, created);
    return created;
  }

  async patch<S extends ResourceRef>(
    ref: S, name: string, patch: unknown, o?: Where & { type?: Exclude<PatchType, "apply">; subresource?: "status" },
  ): Promise<TargetObject<S>> {
    const resource = await this.resolve(ref, o);
    const namespace = this.namespaceOf(resource, o);
    // A subresource's write leaves metadata as it is: no reference to judge there.
    const refs = o?.type !== "json" && !o?.subresource
      ? (patch as { metadata?: { ownerReferences?: unknown } })?.metadata?.ownerReferences : undefined;
    if (Array.isArray(refs)) {
      const named = { kind: resource.kind, metadata: { name, ownerReferences: refs } };
      await refuseNamespacedOwner("patch", named as KubeObject, resource, this.resolver(o), this.options.client);
    }
    const after = await this.call(o, (signal) =>
      this.options.client.patch(resource, namespace, name, patch, {
        type: o?.type, subresource: o?.subresource, fieldManager: this.fieldManager, signal,
      }),
    );
    this.options.written?.wrote(resource, after);
    if (!this.isSelf(resource, namespace, name)) return after as TargetObject<S>;
    this.self.wrote?.(after);
    if (!o?.subresource) {
      const type = o?.type ?? "merge";
      const isObject = typeof patch === "object" && patch !== null && !Array.isArray(patch);
      // A merge patch says exactly what we changed; for the other types, the answer shows it at the paths the patch
      // names.
      const change = type === "merge" && isObject
        ? changedBy(patch as Record<string, any>)
        : ownChange(this.seen.latest, after, namedBy(type === "json" ? "json" : "strategic", patch));
      this.absorb(change, after);
    }
    return after as TargetObject<S>;
  }

  async apply<T extends KubeObject>(
    object: T, o?: Call & { force?: boolean; fieldManager?: string; subresource?: "status" },
  ): Promise<T> {
    const name = object.metadata?.name;
    if (!object.apiVersion || !object.kind || !name) {
      throw new Error(
        "api.apply needs an object with apiVersion, kind and metadata.name (server-side apply cannot generate names)",
      );
    }
    const resource = await this.resolveObject(object, o);
    if (!o?.subresource) await refuseNamespacedOwner("apply", object, resource, this.resolver(o), this.options.client);
    const namespace = this.namespaceOf(resource, { namespace: object.metadata.namespace });
    const after = await this.call(o, (signal) =>
      this.options.client.apply<T>(resource, namespace, name, object, {
        fieldManager: o?.fieldManager ?? this.fieldManager, force: o?.force, subresource: o?.subresource, signal,
      }),
    );
    this.options.written?.wrote(resource, after);
    if (!this.isSelf(resource, namespace, name)) return after;
    this.self.wrote?.(after);
    if (!o?.subresource) this.absorb(ownChange(this.seen.latest, after, namedBy("apply", object)), after);
    return after;
  }

  async delete(
    ref: ResourceRef, name: string, o?: Where & { propagationPolicy?: "Foreground" | "Background" | "Orphan" },
  ): Promise<void> {
    const resource = await this.resolve(ref, o);
    const namespace = this.namespaceOf(resource, o);
    const answer = await this.call(o, (signal) =>
      this.options.client.delete(resource, namespace, name, { propagationPolicy: o?.propagationPolicy, signal }),
    );
    this.options.written?.deleted(resource, name, namespace, answer as KubeObject); // a Status names the uid
  }

  async *watch<S extends ResourceRef>(
    ref: S, o?: Where & { labelSelector?: string },
  ): AsyncIterable<ApiWatchEvent<TargetObject<S>>> {
    if (!this.options.watch) throw new Error("api.watch is not available here: the operator's runtime provides it");
    const resource = await this.resolve(ref, o);
    const namespace = resource.namespaced && o?.namespace === null ? null : this.namespaceOf(resource, o);
    const link = linkedSignal(this.signal, o?.signal);
    try {
      const events = this.options.watch(resource, { namespace, labelSelector: o?.labelSelector }, link.signal);
      yield* events as AsyncIterable<ApiWatchEvent<TargetObject<S>>>;
    } finally {
      // Breaking out of the loop ends the watch's connection too.
      link.controller.abort();
      link.dispose();
    }
  }

  private async call<R>(o: Call | undefined, fn: (signal: AbortSignal) => Promise<R>): Promise<R> {
    if (!o?.signal) return fn(this.signal);
    const link = linkedSignal(this.signal, o.signal);
    try {
      return await fn(link.signal);
    } finally {
      link.dispose();
    }
  }

  /**
   * A resolved Resource is used as it is; a selector or a typed token (`resource.configmaps`: a
   * selector object, which knows neither its kind nor its scope) is resolved by discovery, so that a
   * namespaced kind's path carries the namespace and a cluster-scoped kind's does not.
   */
  private resolve(ref: ResourceRef, o?: Call): Promise<Resource> {
    if (isResolved(ref)) return Promise.resolve(ref);
    return this.call(o, (signal) => this.options.client.resolve(ref, { signal }));
  }

  private resolver(o?: Call): (selector: ResourceSelector) => Promise<Resource> {
    return (selector) => this.call(o, (signal) => this.options.client.resolve(selector, { signal }));
  }

  private resolveObject(object: KubeObject, o?: Call): Promise<Resource> {
    if (!object.apiVersion || !object.kind) {
      throw new Error("api.create/apply need an object with apiVersion and kind (they name its resource)");
    }
    const { group, version } = parseApiVersion(object.apiVersion);
    if (this.self.resource.kind === object.kind && apiVersionOf(this.self.resource) === object.apiVersion) {
      return Promise.resolve(this.self.resource);
    }
    return this.call(o, (signal) => this.options.client.resolve({ group, version, plural: object.kind! }, { signal }));
  }

  private namespaceOf(resource: Resource, o?: { namespace?: string | null }): string | null {
    if (!resource.namespaced) return null;
    const namespace = o?.namespace ?? this.self.body.metadata.namespace;
    if (!namespace) {
      throw new Error(`${resource.plural} are namespaced: say which namespace (the handled object has none)`);
    }
    return namespace;
  }

  private isSelf(resource: Resource, namespace: string | null, name: string): boolean {
    const own = this.self.resource;
    const meta = this.self.body.metadata;
    return resource.group === own.group && resource.plural === own.plural && name === meta.name
      && (namespace ?? undefined) === (meta.namespace ?? undefined);
  }

  private absorb(change: Record<string, any> | undefined, after: KubeObject): void {
    this.seen.latest = after;
    const written = this.self.written;
    if (!change || !written) return;
    Object.assign(written, combinePatches(written, change)); // in place: the cycle holds `written`
  }
}

function isResolved(ref: ResourceRef): ref is Resource {
  return typeof ref === "object" && typeof (ref as Partial<Resource>).namespaced === "boolean"
    && typeof (ref as Partial<Resource>).kind === "string";
}
