// KubeClient: the only thing in kobun that sends HTTP to the API server. The verbs and
// paging live here; the transport it holds (auth, TLS sessions, retries, errors) in ./transport.ts.

import { connect, type ConnectOptions } from "./connection.ts";
import { ApiError, ApplyConflictError } from "./errors.ts";
import { Discovery, type ResourceSelector } from "./discovery.ts";
import type { Connection } from "./connection.ts";
import type { RequestObserver } from "./observer.ts";
import { Transport, type ClientOptions, type Query, type RequestOptions } from "./transport.ts";
import {
  patchContentTypes, resourcePath, type KubeObject, type ObjectList, type PatchType, type Resource, type Status,
} from "./types.ts";

export { type ClientOptions, type Query, type RequestOptions } from "./transport.ts";
export { queryString } from "./bodies.ts";

export interface ListOptions {
  namespace?: string | null;
  labelSelector?: string;
  /** KEP-5866's `shardSelector` (servers without ShardedListAndWatch ignore it). */
  shardSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  /** The Accept header: `METADATA_LIST` (kube/partial.ts) for PartialObjectMetadataList. */
  accept?: string;
  signal?: AbortSignal;
}

/**
 * watching.pageSize's default (500): the page of a LIST when none is asked. Pinned to the
 * settings schema's by test/contracts/defaults.test.ts: this room may not import config/.
 */
export const DEFAULT_PAGE_SIZE = 500;

export interface ListAllOptions {
  namespace?: string | null;
  labelSelector?: string;
  fieldSelector?: string;
  /** Objects per LIST page (default 500): Bun's fetch buffers a whole body, so large LISTs are paged. */
  pageSize?: number;
  signal?: AbortSignal;
}

export interface WriteOptions {
  fieldManager?: string;
  signal?: AbortSignal;
}

export interface PatchOptions {
  type?: PatchType;
  subresource?: "status";
  /** The answer's managedFields are not read: they are left unparsed (kube/managed-fields.ts). */
  withoutManagedFields?: boolean;
}

/**
 * A write whose answer the caller does not use: it is read but not parsed (kube/transport.ts), and the call
 * resolves with undefined.
 */
export interface DiscardedAnswer {
  discardAnswer: true;
}

/** The verbs over a Transport it holds (auth, TLS, retries, deadlines: the transport's). */
export class KubeClient {
  private readonly transport: Transport;
  private readonly discovery = new Discovery((path, signal) => this.request("GET", path, { signal }));

  constructor(connection: Connection, options: ClientOptions = {}) {
    this.transport = new Transport(connection, options);
  }

  static async connect(options: ConnectOptions & ClientOptions): Promise<KubeClient> {
    return new KubeClient(await connect(options), options);
  }

  // ----- the transport's, as the client's -----

  get server(): string {
    return this.transport.server;
  }

  get connection(): Connection {
    return this.transport.connection;
  }

  /** Adds an observer of every attempt; the returned call removes it. */
  observe(observer: RequestObserver): () => void {
    return this.transport.observe(observer);
  }

  /** Closes the transport's sessions (keep-alive sockets). */
  close(): void {
    this.transport.close();
  }

  /** One request with the transport's auth, retries and deadline; the answer's JSON. */
  request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return this.transport.request<T>(method, path, options);
  }

  /** A streaming GET (a watch): the open Response. */
  stream(
    path: string, query: Query, signal: AbortSignal, hooks?: { waitingForSlot?(): void; sending?(): void },
    accept?: string,
  ): Promise<Response> {
    return this.transport.stream(path, query, signal, hooks, accept);
  }

  // ----- verbs -----

  get<T extends KubeObject = KubeObject>(
    resource: Resource, namespace: string | null, name: string,
    o?: { signal?: AbortSignal; withoutManagedFields?: boolean },
  ): Promise<T> {
    return this.request<T>("GET", resourcePath(resource, namespace, name), {
      signal: o?.signal, ...(o?.withoutManagedFields ? { withoutManagedFields: true } : {}),
    });
  }

  /** One page of a LIST. */
  list<T extends KubeObject = KubeObject>(resource: Resource, o: ListOptions = {}): Promise<ObjectList<T>> {
    return this.request<ObjectList<T>>("GET", resourcePath(resource, o.namespace), {
      query: {
        labelSelector: o.labelSelector || undefined,
        fieldSelector: o.fieldSelector || undefined,
        shardSelector: o.shardSelector || undefined,
        limit: o.limit,
        continue: o.continue || undefined,
        resourceVersion: o.resourceVersion,
      },
      ...(o.accept ? { accept: o.accept } : {}),
      signal: o.signal,
    });
  }

  /** Every page of a LIST, as one list. An expired continue token (410) is thrown as ApiError(410): list afresh. */
  async listAll<T extends KubeObject = KubeObject>(resource: Resource, o: ListAllOptions = {}): Promise<ObjectList<T>> {
    const limit = o.pageSize ?? DEFAULT_PAGE_SIZE;
    let page = await this.list<T>(resource, { ...o, limit });
    const items = page.items ?? [];
    while (page.metadata?.continue) {
      page = await this.list<T>(resource, { ...o, limit, continue: page.metadata.continue });
      for (const item of page.items ?? []) items.push(item);
    }
    return { ...page, metadata: { resourceVersion: page.metadata?.resourceVersion }, items };
  }

  create(
    resource: Resource, namespace: string | null, body: KubeObject, o: WriteOptions & DiscardedAnswer,
  ): Promise<void>;
  create<T extends KubeObject = KubeObject>(
    resource: Resource, namespace: string | null, body: KubeObject, o?: WriteOptions,
  ): Promise<T>;
  create<T extends KubeObject = KubeObject>(
    resource: Resource, namespace: string | null, body: KubeObject, o?: WriteOptions & Partial<DiscardedAnswer>,
  ): Promise<T | void> {
    return this.request<T>("POST", resourcePath(resource, namespace ?? body.metadata?.namespace), {
      body,
      query: o?.fieldManager ? { fieldManager: o.fieldManager } : undefined,
      signal: o?.signal,
      ...(o?.discardAnswer ? { discardAnswer: true } : {}),
    });
  }

  replace<T extends KubeObject = KubeObject>(
    resource: Resource,
    namespace: string | null,
    name: string,
    body: KubeObject,
    o?: WriteOptions & { subresource?: "status" },
  ): Promise<T> {
    return this.request<T>("PUT", resourcePath(resource, namespace, name, o?.subresource), {
      body,
      query: o?.fieldManager ? { fieldManager: o.fieldManager } : undefined,
      signal: o?.signal,
    });
  }

  patch(
    resource: Resource, namespace: string | null, name: string, patch: unknown,
    o: WriteOptions & PatchOptions & DiscardedAnswer,
  ): Promise<void>;
  patch<T extends KubeObject = KubeObject>(
    resource: Resource, namespace: string | null, name: string, patch: unknown, o?: WriteOptions & PatchOptions,
  ): Promise<T>;
  patch<T extends KubeObject = KubeObject>(
    resource: Resource,
    namespace: string | null,
    name: string,
    patch: unknown,
    o?: WriteOptions & PatchOptions & Partial<DiscardedAnswer>,
  ): Promise<T | void> {
    return this.request<T>("PATCH", resourcePath(resource, namespace, name, o?.subresource), {
      body: patch,
      contentType: patchContentTypes[o?.type ?? "merge"],
      query: o?.fieldManager ? { fieldManager: o.fieldManager } : undefined,
      signal: o?.signal,
      ...(o?.discardAnswer ? { discardAnswer: true } : {}),
      ...(o?.withoutManagedFields ? { withoutManagedFields: true } : {}),
    });
  }

  /**
   * Server-side apply: `body` (with apiVersion, kind and metadata.name) is the whole intent of
   * `fieldManager`, which becomes the owner of the fields it sets. A 409 whose fields other
   * managers own is thrown as ApplyConflictError naming them; `force` takes them over.
   */
  async apply<T extends KubeObject = KubeObject>(
    resource: Resource,
    namespace: string | null,
    name: string,
    body: KubeObject,
    o: { fieldManager: string; force?: boolean; subresource?: "status"; signal?: AbortSignal },
  ): Promise<T> {
    if (!o.fieldManager) throw new Error("apply needs a fieldManager: the name that owns the applied fields");
    try {
      return await this.request<T>("PATCH", resourcePath(resource, namespace, name, o.subresource), {
        body,
        contentType: patchContentTypes.apply,
        query: { fieldManager: o.fieldManager, force: o.force ? true : undefined },
        signal: o.signal,
        // An apply is idempotent by design: repeating it sets the same fields again.
        retry: true,
      });
    } catch (error) {
      if (error instanceof ApiError && error.code === 409 && error.status.details?.causes?.length) {
        throw new ApplyConflictError(error);
      }
      throw error;
    }
  }

  delete(
    resource: Resource,
    namespace: string | null,
    name: string,
    o?: { propagationPolicy?: string; gracePeriodSeconds?: number; signal?: AbortSignal },
  ): Promise<KubeObject | Status> {
    let body: Record<string, unknown> | undefined;
    if (o?.propagationPolicy !== undefined || o?.gracePeriodSeconds !== undefined) {
      const { propagationPolicy, gracePeriodSeconds } = o;
      body = { kind: "DeleteOptions", apiVersion: "v1", propagationPolicy, gracePeriodSeconds };
    }
    return this.request("DELETE", resourcePath(resource, namespace, name), { body, signal: o?.signal });
  }

  resolve(selector: ResourceSelector, o?: { signal?: AbortSignal }): Promise<Resource> {
    return this.discovery.resolve(selector, o?.signal);
  }

  /** Forgets cached discovery (e.g. after installing a CRD); resolve() also refreshes on a miss by itself. */
  invalidateDiscovery(): void {
    this.discovery.invalidate();
  }
}
