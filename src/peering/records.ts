// Reading and writing records in a peering object, and the manual records of
// `kobun freeze` / `kobun resume`. Every write is a patch of `status.<id>` on the MAIN object
// (Kopf's CRDs have no status subresource); if a cluster's CRD does have one, the main-object
// write comes back without our record, and we switch to `/status` for that target.

import type { KubeClient } from "../kube/index.ts";
import { ApiError } from "../kube/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import type { WatchClient } from "../watching/index.ts";
import { peerRecord, type PeerRecord } from "./decide.ts";
import { manualPeerId } from "./identity.ts";
import { peeringResource, type PeeringGroup } from "./resources.ts";

/** What peering needs from the API client; `KubeClient` satisfies it. */
export type PeeringClient = Pick<KubeClient, "get" | "create" | "replace" | "patch"> & WatchClient;

/** One peering object: which resource, where, which name. */
export interface PeeringTarget {
  resource: Resource;
  namespace: string | null;
  name: string;
  /** Learnt on the first write: this cluster's CRD has a status subresource, so records go to `/status`. */
  statusSubresource?: boolean;
}

export function peeringTarget(group: PeeringGroup, name: string, namespace: string | null): PeeringTarget {
  return { resource: peeringResource(group, namespace !== null), namespace, name };
}

/** `"cluster/default"` or `"ns1/default"`: how logs and toggle holders name a peering object. */
export function describeTarget(target: PeeringTarget): string {
  return `${target.namespace ?? "cluster"}/${target.name}`;
}

/**
 * The server answered 404 because the resource itself is not served (no CRD), not because
 * the object is missing: kube-apiserver then sends a Status without `details.name`.
 */
export function isResourceMissing(error: unknown): boolean {
  const e = error as { code?: unknown; status?: { details?: { name?: unknown } } } | null;
  return !!e && e.code === 404 && !e.status?.details?.name;
}

export function isObjectMissing(error: unknown): boolean {
  const e = error as { code?: unknown; status?: { details?: { name?: unknown } } } | null;
  return !!e && e.code === 404 && !!e.status?.details?.name;
}

/** Writes (`record`) or removes (`null`) one peer's record with a merge patch. */
export async function writeRecord(
  client: PeeringClient,
  target: PeeringTarget,
  id: string,
  record: PeerRecord | null,
  signal?: AbortSignal,
): Promise<KubeObject> {
  const patch = { status: { [id]: record } };
  const { resource, namespace, name } = target;
  if (target.statusSubresource) {
    return client.patch(resource, namespace, name, patch, { type: "merge", subresource: "status", signal });
  }
  const body = await client.patch(resource, namespace, name, patch, { type: "merge", signal });
  if (record !== null && body?.status?.[id] === undefined) {
    // The server dropped `status` from a main-object write: this CRD has a status subresource.
    target.statusSubresource = true;
    return client.patch(resource, namespace, name, patch, { type: "merge", subresource: "status", signal });
  }
  return body;
}

/**
 * Removes a dead peer's record, but only if it is still the record we judged dead: a JSON
 * patch `test`s its `lastseen` first. A plain merge patch (Kopf's way) would also delete a
 * record the peer refreshed a moment ago, which unfreezes others while that peer is alive.
 * Returns false when the record changed (or vanished) in between.
 */
export async function removeDeadRecord(
  client: PeeringClient,
  target: PeeringTarget,
  id: string,
  lastseen: unknown,
  signal?: AbortSignal,
): Promise<boolean> {
  const pointer = `/status/${id.replaceAll("~", "~0").replaceAll("/", "~1")}`;
  const patch = [
    { op: "test", path: `${pointer}/lastseen`, value: lastseen },
    { op: "remove", path: pointer },
  ];
  const { resource, namespace, name } = target;
  const subresource = target.statusSubresource ? ("status" as const) : undefined;
  try {
    await client.patch(resource, namespace, name, patch, { type: "json", subresource, signal });
    return true;
  } catch (error) {
    // 422: the test failed (the peer is back) or the record is already gone.
    if (error instanceof ApiError && (error.code === 422 || error.code === 409 || error.code === 404)) return false;
    throw error;
  }
}
