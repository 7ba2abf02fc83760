// adopt(): makes an object a child of the handled one, so that deleting the parent
// garbage-collects it (kube-controller-manager's garbage collector on a real cluster, the
// sandbox's cascade in tests): a controller ownerReference that blocks the owner's deletion
// in the foreground, the owner's namespace and a name prefix when the child has none, and
// the owner's labels when asked. Pure: it changes `child` in place and returns it.

import type { KubeObject, ObjectMeta } from "../kube/index.ts";

/** How `adopt` marks a child. */
export interface AdoptOptions {
  /** The parent: usually the handler's `body`. */
  owner: KubeObject;
  /** Copy the owner's labels (true: all; a list: those keys); the child's own labels win. */
  labels?: boolean | readonly string[];
}

/**
 * The child with an owner reference to `options.owner` (controller, blockOwnerDeletion) and the owner's namespace:
 * deleting the owner garbage-collects it.
 */
export function adopt<T extends KubeObject>(child: T, options: AdoptOptions): T & { metadata: ObjectMeta } {
  const owner = options?.owner;
  const meta = owner?.metadata;
  if (!owner?.apiVersion || !owner.kind || !meta?.name || !meta.uid) {
    throw new Error(
      "adopt needs { owner } with apiVersion, kind, metadata.name and metadata.uid: pass the handler's body",
    );
  }
  child.metadata ??= {};
  const own = child.metadata;
  if (own.namespace === undefined && meta.namespace !== undefined) own.namespace = meta.namespace;
  if (meta.namespace !== undefined && own.namespace !== meta.namespace) {
    throw new Error(
      `adopt: ${meta.namespace}/${meta.name} cannot own an object in namespace ${own.namespace}: ` +
        "owner references do not cross namespaces",
    );
  }
  if (!own.name && !own.generateName) own.generateName = `${meta.name}-`;
  const refs = (own.ownerReferences ?? []) as Record<string, unknown>[];
  const other = refs.find((r) => r.controller === true && r.uid !== meta.uid);
  if (other) {
    throw new Error(
      `adopt: ${own.name ?? own.generateName} is already controlled by ${other.kind} ${other.name} ` +
        `(uid ${other.uid}); an object has one controller`,
    );
  }
  const ref = {
    apiVersion: owner.apiVersion, kind: owner.kind, name: meta.name, uid: meta.uid, controller: true,
    blockOwnerDeletion: true,
  };
  own.ownerReferences = [...refs.filter((r) => r.uid !== meta.uid), ref];
  if (options.labels && meta.labels) {
    const keys = options.labels === true ? Object.keys(meta.labels) : options.labels;
    const labels: Record<string, string> = {};
    for (const key of keys) if (meta.labels[key] !== undefined) labels[key] = meta.labels[key];
    own.labels = { ...labels, ...own.labels };
  }
  return child;
}
