// Builds what handlers receive: the object's parts, a shared `patch`, diffs, logger, memo.
// Must never copy the body: handlers get the object as it came from the API server.

import type { KubeObject, Resource } from "../kube/index.ts";
import type { EventPoster } from "../posting/index.ts";
import { linkedSignal } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import type { Api } from "../declaring/index.ts";
import type { Index } from "../declaring/index.ts";
import { adopt, PATCH_OBJECT, type ObjectContext, type Patch } from "../declaring/index.ts";
import type { ApiClient } from "./api.ts";
import { objectLogger } from "./posting-logger.ts";
import { eventRecorder, NO_EVENTS } from "./recorder.ts";

const EMPTY: Record<string, any> = Object.freeze({}) as Record<string, any>;

/** What the operator lends its handlers: its API client and its Event poster. */
export interface HandlerTools {
  api?: ApiClient;
  poster?: EventPoster;
  /** The operator's indexes (indexes.ts's `view`). */
  indexes?: Readonly<Record<string, Index>>;
  /** Set when the resource is watched metadata-only: why, for the error a read of ctx.spec or ctx.status gets. */
  metadataOnly?: string;
}

export function objectContext(
  body: KubeObject,
  resource: Resource,
  memo: Record<string, any>,
  logger: Logger,
  signal: AbortSignal,
  tools: HandlerTools = {},
  /** Where `api` puts what the handlers' own writes to the object changed (api.ts' BoundObject). */
  written?: Record<string, any>,
  wrote?: (after: KubeObject) => void,
): ObjectContext {
  const meta = body.metadata;
  const partial = tools.metadataOnly;
  return {
    body,
    spec: partial ? notReceived("spec", partial) : (body.spec ?? EMPTY),
    meta,
    status: partial ? notReceived("status", partial) : (body.status ?? EMPTY),
    uid: meta.uid ?? "",
    name: meta.name ?? "",
    namespace: meta.namespace,
    labels: meta.labels ?? EMPTY,
    annotations: meta.annotations ?? EMPTY,
    memo,
    resource,
    logger: objectLogger(logger, tools.poster, body),
    signal,
    api: tools.api ? tools.api.bind({ resource, body, written, ...(wrote ? { wrote } : {}) }, signal) : NO_API,
    event: tools.poster ? eventRecorder(tools.poster, body) : NO_EVENTS,
    adopt: (child, options) => adopt(child, { ...options, owner: options?.owner ?? body }),
    indexes: tools.indexes ?? NO_INDEXES,
  };
}

/**
 * What ctx.spec and ctx.status are when only metadata is received: reading any field throws,
 * saying why, instead of handing out an empty object that looks like an empty spec.
 */
function notReceived(part: "spec" | "status", why: string): Record<string, any> {
  const fail = (key: string | symbol): never => {
    throw new Error(
      `ctx.${part}${typeof key === "string" ? `.${key}` : ""}: not received, ${why}; ` +
        "read ctx.meta, or set metadataOnly: false in kobun.yaml",
    );
  };
  return new Proxy(EMPTY, {
    get: (_, key) => (key === "then" || key === Symbol.toPrimitive || key === "toJSON" ? undefined : fail(key)),
    has: (_, key) => fail(key),
    ownKeys: () => fail("(its keys)"),
  });
}

// For handlers run without an operator around them (a processor built without a client, in tests).
const unavailable = (): never => {
  throw new Error("ctx.api is not available: this processor was built without the operator's ApiClient (options.api)");
};
const NO_API: Api = {
  fieldManager: "kobun", get: unavailable, list: unavailable, create: unavailable, patch: unavailable,
  apply: unavailable, delete: unavailable, watch: unavailable,
};
const NO_INDEXES: Readonly<Record<string, Index>> = Object.freeze({});

/**
 * Gives `ctx` a `signal` of its own that follows `parent`, made only when first read: most
 * handlers never read it, and then it costs no controller and no links. The returned call ends
 * the lending: the signal is unlinked (listeners the handler left on it go with its call), and a
 * first read after that gets a signal aborted if `parent` was, else one that never aborts.
 */
export function lendSignal(ctx: { signal: AbortSignal }, parent: AbortSignal): () => void {
  let own: { signal: AbortSignal; dispose(): void } | undefined;
  let ended = false;
  Object.defineProperty(ctx, "signal", {
    configurable: true, enumerable: true,
    get: () => {
      own ??= ended && !parent.aborted ? { signal: new AbortController().signal, dispose() {} } : linkedSignal(parent);
      return own.signal;
    },
    // A handler may put a signal of its own there; from then on it is a plain value.
    set: (value: AbortSignal) =>
      Object.defineProperty(ctx, "signal", { value, writable: true, configurable: true, enumerable: true }),
  });
  return () => {
    ended = true;
    own?.dispose();
  };
}

/** A handler's `ctx.patch`; `of` gives the object it is for (conditions.set's default object). */
export function newPatch(of?: () => KubeObject | undefined): Patch {
  const patch: Patch = { metadata: {}, spec: {}, status: {} };
  if (of) Object.defineProperty(patch, PATCH_OBJECT, { value: of });
  return patch;
}

/** The user's patch without the empty sub-objects that were pre-created for convenience. */
export function compactPatch(patch: Patch): Record<string, any> | undefined {
  const out: Record<string, any> = {};
  for (const key in patch) {
    const value = patch[key];
    if (value === undefined) continue;
    const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
    if (isObject && Object.keys(value).length === 0) continue;
    out[key] = value;
  }
  return Object.keys(out).length ? out : undefined;
}
