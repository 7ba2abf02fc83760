// The one owner reference the API server takes but the garbage collector never honours: a
// cluster-scoped object owned by a namespaced one (kube-controller-manager reports
// OwnerRefInvalidNamespace and never collects the child). adopt() cannot see a kind's scope,
// so `ctx.api` checks what it creates or applies, once discovery has told the child's scope,
// and refuses it by name instead of leaving an orphan that deleting the parent does not remove.

import { parseApiVersion, type KubeObject, type Resource, type ResourceSelector } from "../kube/index.ts";

type Resolve = (selector: ResourceSelector) => Promise<Resource>;

/**
 * Owner kinds discovery does not serve, per client: not asked again (a miss makes discovery fetch afresh, and a
 * mistyped apiVersion in a reference would cost every write of that child a request).
 */
const unserved = new WeakMap<object, Set<string>>();

/** Throws when `object`, of the cluster-scoped `resource`, names a namespaced owner; `client` keys what is known. */
export async function refuseNamespacedOwner(
  verb: string, object: KubeObject, resource: Resource, resolve: Resolve, client: object,
): Promise<void> {
  const refs = object.metadata?.ownerReferences as { apiVersion?: string; kind?: string; name?: string }[] | undefined;
  if (resource.namespaced || !refs?.length) return;
  const misses = unserved.get(client) ?? new Set<string>();
  unserved.set(client, misses);
  for (const ref of refs) {
    if (!ref.apiVersion || !ref.kind || misses.has(`${ref.apiVersion} ${ref.kind}`)) continue;
    const { group, version } = parseApiVersion(ref.apiVersion);
    const owner = await resolve({ group, version, plural: ref.kind }).catch((error: unknown) => {
      // An owner kind discovery does not know is not ours to judge: the API server answers for it. Anything
      // else (an abort, a failing discovery) fails the write, as it would have failed itself.
      if (!(error instanceof Error) || !error.message.startsWith("unknown resource")) throw error;
      misses.add(`${ref.apiVersion} ${ref.kind}`);
      return undefined;
    });
    if (!owner?.namespaced) continue;
    const name = object.metadata?.name ?? (object.metadata?.generateName ? `${object.metadata.generateName}…` : "");
    throw new Error(
      `api.${verb}: ${object.kind}${name ? ` ${name}` : ""} is cluster-scoped and `
        + `cannot be owned by ${ref.kind} ${ref.name}, which is namespaced: Kubernetes' garbage collector ignores `
        + "such an owner reference, so deleting the owner would not delete it (adopt it by a cluster-scoped owner, "
        + "or delete it in the owner's delete handler)",
    );
  }
}
