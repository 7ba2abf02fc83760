// What a store keeps of a known object when no reader needs bodies (`keeps: "identity"`): the
// few fields a synthetic deletion carries, as ONE record per object, turned into a KubeObject
// only when that deletion is produced. Kept as objects ({ apiVersion, kind, metadata } and the
// finalizers array) they were three cells and a second copy of the uid per object (issue 15).
// The uid is the very string the shelf's table holds as the object's key; an unchanged list
// of finalizers (most objects carry the same one) is one frozen array for all of them.

import type { KubeObject, ObjectMeta } from "../kube/index.ts";

export class Identity {
  private constructor(
    /** The shelf's key string (undefined: the object has no uid, its key is namespace/name). */
    readonly uid: string | undefined,
    readonly apiVersion: string | undefined,
    readonly kind: string | undefined,
    readonly name: string | undefined,
    readonly namespace: string | undefined,
    readonly resourceVersion: string | undefined,
    readonly labels: Record<string, string> | undefined,
    /** Frozen and shared: copied into each deletion's object, so nothing can change it. */
    readonly finalizers: readonly string[] | undefined,
    readonly deletionTimestamp: string | undefined,
    readonly ownerReferences: Record<string, unknown>[] | undefined,
  ) {}

  /** The identity of `object`; `uid`: the key string already held for it, if any; `finalizers`: the shared list. */
  static of(object: KubeObject, uid: string | undefined, finalizers: Finalizers): Identity {
    const m = object.metadata;
    return new Identity(
      m.uid === undefined ? undefined : (uid ?? m.uid), object.apiVersion, object.kind,
      m.name, m.namespace, m.resourceVersion,
      m.labels, finalizers.shared(m.finalizers), m.deletionTimestamp, m.ownerReferences,
    );
  }

  /** What a synthetic deletion carries: apiVersion, kind, and the metadata fields that are set. */
  object(): KubeObject {
    const metadata: ObjectMeta = { name: this.name, uid: this.uid, resourceVersion: this.resourceVersion };
    if (this.namespace !== undefined) metadata.namespace = this.namespace;
    if (this.labels !== undefined) metadata.labels = this.labels;
    if (this.finalizers !== undefined) metadata.finalizers = [...this.finalizers];
    if (this.deletionTimestamp !== undefined) metadata.deletionTimestamp = this.deletionTimestamp;
    if (this.ownerReferences !== undefined) metadata.ownerReferences = this.ownerReferences;
    return { apiVersion: this.apiVersion, kind: this.kind, metadata };
  }
}

/** The lists of finalizers identities hold: the last one seen, frozen, stands for every equal list. */
export class Finalizers {
  private last: readonly string[] | undefined;

  shared(list: readonly string[] | undefined): readonly string[] | undefined {
    if (list === undefined) return undefined;
    const last = this.last;
    if (last && last.length === list.length && last.every((f, i) => f === list[i])) return last;
    return (this.last = Object.freeze([...list]));
  }
}
