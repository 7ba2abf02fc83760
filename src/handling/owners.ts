// The one owner reference the API server takes but the garbage collector never honours: a
// cluster-scoped object owned by a namespaced one (kube-controller-manager reports
// OwnerRefInvalidNamespace and never collects the child). adopt() cannot see a kind's scope,
// so `ctx.api` checks what it creates or applies, once discovery has told the child's scope,
// and refuses it by name instead of leaving an orphan that deleting the parent does not remove.

import { parseApiVersion, type KubeObject, type Resource, type ResourceSelector } from "../kube/index.ts";

type Resolve = (selector: ResourceSelector) => Promise<Resource>;

/** Throws when `object`, of the cluster-scoped `resource`, names a namespaced owner. */
export async function refuseNamespacedOwner(
  verb: string, object: KubeObject, resource: Resource, resolve: Resolve,
): Promise<void> {
  const refs = object.metadata?.ownerReferences as { apiVersion?: string; kind?: string; name?: string }[] | undefined;
  if (resource.namespaced || !refs?.length) return;
  for (const ref of refs) {
    if (!ref.apiVersion || !ref.kind) continue;
    const { group, version } = parseApiVersion(ref.apiVersion);
    // An owner kind discovery does not know is not ours to judge: the API server answers for it.
    const owner = await resolve({ group, version, plural: ref.kind }).catch(() => undefined);
    if (!owner?.namespaced) continue;
    throw new Error(
      `api.${verb}: ${object.kind} ${object.metadata?.name ?? object.metadata?.generateName} is cluster-scoped and `
        + `cannot be owned by ${ref.kind} ${ref.name}, which is namespaced: Kubernetes' garbage collector ignores `
        + "such an owner reference, so deleting the owner would not delete it (adopt it by a cluster-scoped owner, "
        + "or delete it in the owner's delete handler)",
    );
  }
}
