// Builds what handlers receive: the object's parts, a shared `patch`, diffs, logger, memo.
// Must never copy the body: handlers get the object as it came from the API server.

import type { KubeObject, Resource } from "../kube/types.ts";
import type { Logger } from "../util/log.ts";
import type { ObjectContext, Patch } from "./types.ts";

const EMPTY: Record<string, any> = Object.freeze({}) as Record<string, any>;

export function objectContext(
  body: KubeObject,
  resource: Resource,
  memo: Record<string, any>,
  logger: Logger,
  signal: AbortSignal,
): ObjectContext {
  const meta = body.metadata;
  return {
    body,
    spec: body.spec ?? EMPTY,
    meta,
    status: body.status ?? EMPTY,
    uid: meta.uid ?? "",
    name: meta.name ?? "",
    namespace: meta.namespace,
    labels: meta.labels ?? EMPTY,
    annotations: meta.annotations ?? EMPTY,
    memo,
    resource,
    logger,
    signal,
  };
}

export function newPatch(): Patch {
  return { metadata: {}, spec: {}, status: {} };
}

/** The user's patch without the empty sub-objects that were pre-created for convenience. */
export function compactPatch(patch: Patch): Record<string, any> | undefined {
  const out: Record<string, any> = {};
  for (const key in patch) {
    const value = patch[key];
    if (value === undefined) continue;
    if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0) continue;
    out[key] = value;
  }
  return Object.keys(out).length ? out : undefined;
}
