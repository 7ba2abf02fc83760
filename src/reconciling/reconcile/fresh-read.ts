// The body a woken reconcile runs on (something it owns or watches changed; a requeue or a retry
// is a wake too): the freshest this operator knows, and never older than its own last write to
// the object. The store may lag the write by the watch's delay: the reconcile then waits for the
// store to catch up (bounded), and past the bound reads the object from the API server. With
// the protection off (`reconcile.readOwnWrites: false`), no wait: the store's copy with our writes
// over it (a body older than our write would be dropped as our echo, its wake lost), while ctx.cache
// reads the stores as they are: what an informer-style cache gives (for comparison, and for who asks).

import { isNotFound, notOlder, type KubeClient, type KubeObject, type Resource } from "../../kube/index.ts";
import type { KnownObjects, OwnWrites } from "../../caching/index.ts";

export interface FreshReads {
  resource: Resource;
  store: KnownObjects;
  /** Our writes the store has not seen yet. */
  writes: OwnWrites;
  client: Pick<KubeClient, "get">;
  /** Wait for the store this long before reading through; 0 with `enabled` off. */
  timeoutMs: number;
  enabled: boolean;
}

/**
 * The object named by `known` as the freshest read gives it, not older than `wrote` (our last
 * write's resourceVersion); undefined when it is gone, or another object has its name now.
 */
export async function freshBody(
  reads: FreshReads, known: KubeObject, wrote: string | undefined, signal: AbortSignal,
): Promise<KubeObject | undefined> {
  const { name = "", namespace, uid } = known.metadata;
  const held = reads.writes.get(name, namespace);
  if (!reads.enabled || wrote === undefined || (held && atLeast(held, wrote))) return sameObject(held, uid);
  const object = { name, namespace: namespace ?? null };
  if (await reads.store.until(wrote, { object, signal, timeoutMs: reads.timeoutMs })) {
    return sameObject(reads.writes.get(name, namespace), uid);
  }
  try {
    return sameObject(await reads.client.get(reads.resource, namespace ?? null, name, { signal }), uid);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

function atLeast(object: KubeObject, rv: string): boolean {
  const held = object.metadata.resourceVersion;
  return held !== undefined && notOlder(held, rv);
}

function sameObject(object: KubeObject | undefined, uid: string | undefined): KubeObject | undefined {
  return object && (!uid || object.metadata.uid === uid) ? object : undefined;
}
