// adopt(): makes an object a child of the handled one, so that deleting the parent
// garbage-collects it (kube-controller-manager's garbage collector on a real cluster, the
// sandbox's cascade in tests): a controller ownerReference that blocks the owner's deletion
// in the foreground, the owner's namespace, a name prefix when the child has none, and the
// owner's labels (unless `labels: false`). `ctx.adopt(child)` is the same with the handled object
// as the owner (handling/context.ts). Also Kopf's smaller helpers: `label()`, and
// `appendOwnerReference()` / `removeOwnerReference()` for references that need not be the
// controller. Pure: they change the objects in place.

import type { KubeObject, ObjectMeta } from "../kube/index.ts";

/** How `adopt` marks a child. */
export interface AdoptOptions {
  /** The parent. `ctx.adopt(child)` in a handler: the handled object; `adopt(child, { owner })` elsewhere. */
  owner?: KubeObject;
  /** Copy the owner's labels: true (default) all, a list those keys, false none; the child's own labels win. */
  labels?: boolean | readonly string[];
}

/** How `appendOwnerReference` marks an object. */
export interface OwnerReferenceOptions {
  /** The owner is the object's controller (at most one per object). Default true, as Kopf's. */
  controller?: boolean;
  /** The owner's foreground deletion waits for this object. Default true. */
  blockOwnerDeletion?: boolean;
}

/** How `label` writes labels. */
export interface LabelOptions {
  /** Overwrite labels the object already has. Default false: its own values win. */
  forced?: boolean;
  /** Dotted paths of nested templates labelled too, when present (`"spec.template"` of a Deployment or Job). */
  nested?: string | readonly string[];
}

type Objects<T> = T | readonly T[];

/**
 * The child with an owner reference to `options.owner` (controller, blockOwnerDeletion), the owner's namespace,
 * `generateName: "<owner's name>-"` when it has no name, and the owner's labels: deleting the owner
 * garbage-collects it.
 */
export function adopt<T extends KubeObject>(child: T, options: AdoptOptions): T & { metadata: ObjectMeta } {
  const owner = options?.owner;
  if (!owner) {
    throw new Error("adopt(child) needs { owner } outside a handler; inside one, ctx.adopt(child) adopts it by the "
      + "handled object");
  }
  const meta = checkedOwner(owner, "adopt");
  child.metadata ??= {};
  const own = child.metadata;
  if (own.namespace === undefined && meta.namespace !== undefined) own.namespace = meta.namespace;
  refuseCrossNamespace("adopt", meta, own);
  if (!own.name && !own.generateName) own.generateName = `${meta.name}-`;
  const refs = (own.ownerReferences ?? []) as Record<string, unknown>[];
  const other = refs.find((r) => r.controller === true && r.uid !== meta.uid);
  if (other) {
    throw new Error(
      `adopt: ${own.name ?? own.generateName} is already controlled by ${other.kind} ${other.name} ` +
        `(uid ${other.uid}); an object has one controller`,
    );
  }
  own.ownerReferences = [...refs.filter((r) => r.uid !== meta.uid), referenceTo(owner, {})];
  const copy = options.labels ?? true;
  if (copy && meta.labels) {
    const keys = copy === true ? Object.keys(meta.labels) : copy;
    const labels: Record<string, string> = {};
    for (const key of keys) if (meta.labels[key] !== undefined) labels[key] = meta.labels[key];
    own.labels = { ...labels, ...own.labels };
  }
  return child;
}

/**
 * Adds an owner reference to `owner` on each object, unless one to the same uid is there (Kopf's
 * `append_owner_reference`). `{ controller: false }` makes an owner that is not the controller: the objects
 * are garbage-collected once all of their owners are gone, and any number of them may own one object.
 */
export function appendOwnerReference<T extends KubeObject>(
  objects: Objects<T>, owner: KubeObject, options: OwnerReferenceOptions = {},
): void {
  const meta = checkedOwner(owner, "appendOwnerReference");
  const ref = referenceTo(owner, options);
  const refsOf = (object: KubeObject) => (object.metadata?.ownerReferences ?? []) as Record<string, unknown>[];
  // Every object is checked before any is changed: a refusal leaves the list as it was given.
  const changed = list(objects).filter((object) => !refsOf(object).some((r) => r.uid === meta.uid));
  for (const object of changed) {
    const metadata = object.metadata ?? {};
    // Not yet placed (no namespace) is the caller's to place; placed elsewhere, the collector would delete it.
    if (metadata.namespace !== undefined) refuseCrossNamespace("appendOwnerReference", meta, metadata);
    const other = ref.controller ? refsOf(object).find((r) => r.controller === true) : undefined;
    if (other) {
      throw new Error(`appendOwnerReference: ${metadata.name ?? metadata.generateName} is already `
        + `controlled by ${other.kind} ${other.name}; pass { controller: false } for another owner`);
    }
  }
  for (const object of changed) {
    object.metadata ??= {};
    object.metadata.ownerReferences = [...refsOf(object), ref];
  }
}

/** Removes the owner reference to `owner` (by uid) from each object (Kopf's `remove_owner_reference`). */
export function removeOwnerReference<T extends KubeObject>(objects: Objects<T>, owner: KubeObject): void {
  const uid = owner?.metadata?.uid;
  if (!uid) throw new Error("removeOwnerReference needs an owner with metadata.uid");
  for (const object of list(objects)) {
    const refs = object.metadata?.ownerReferences as Record<string, unknown>[] | undefined;
    if (refs?.some((r) => r.uid === uid)) object.metadata.ownerReferences = refs.filter((r) => r.uid !== uid);
  }
}

/**
 * Sets `labels` on each object (and on its `nested` templates that exist), keeping the values it has unless
 * `forced` (Kopf's `label`). To copy a parent's labels: `label(child, body.metadata.labels ?? {})`.
 */
export function label<T extends KubeObject>(
  objects: Objects<T>, labels: Readonly<Record<string, string>>, options: LabelOptions = {},
): void {
  if (typeof labels !== "object" || labels === null) throw new Error("label(objects, labels): labels is an object");
  const paths = typeof options.nested === "string" ? [options.nested] : (options.nested ?? []);
  for (const object of list(objects)) {
    const targets: Record<string, any>[] = [object];
    for (const path of paths) {
      const found = path.split(".").reduce<any>((at, key) => (at && typeof at === "object" ? at[key] : undefined),
        object);
      if (found && typeof found === "object") targets.push(found);
    }
    for (const target of targets) {
      target.metadata ??= {};
      const own: Record<string, string> = (target.metadata.labels ??= {});
      for (const [key, value] of Object.entries(labels)) if (options.forced || !(key in own)) own[key] = value;
    }
  }
}

function checkedOwner(owner: KubeObject, what: string): ObjectMeta & { name: string; uid: string } {
  const meta = owner?.metadata;
  if (!owner?.apiVersion || !owner.kind || !meta?.name || !meta.uid) {
    throw new Error(
      `${what} needs an owner with apiVersion, kind, metadata.name and metadata.uid: the handler's body has them`,
    );
  }
  return meta as ObjectMeta & { name: string; uid: string };
}

/** A namespaced owner in another namespace is absent to the garbage collector, which deletes the object at once. */
function refuseCrossNamespace(what: string, owner: ObjectMeta, child: ObjectMeta): void {
  if (owner.namespace === undefined || child.namespace === owner.namespace) return;
  throw new Error(
    `${what}: ${owner.namespace}/${owner.name} cannot own ${child.name ?? child.generateName ?? "an object"} in `
      + `namespace ${child.namespace}: ` +
      "owner references do not cross namespaces",
  );
}

function referenceTo(owner: KubeObject, options: OwnerReferenceOptions): Record<string, unknown> {
  return {
    apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid,
    controller: options.controller ?? true, blockOwnerDeletion: options.blockOwnerDeletion ?? true,
  };
}

function list<T>(objects: Objects<T>): readonly T[] {
  return Array.isArray(objects) ? objects : [objects as T];
}
