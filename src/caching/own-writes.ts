// OwnWrites: this operator's writes to one resource that its store has not seen yet, laid over
// the store's reads, so that a reader is never staler than the operator's own writes (the
// "read your own writes" of controller-runtime's design #3320, the Java Operator SDK's
// read-cache-after-write, kube-controller-manager's KEP-5647). A create shows in a list at once
// (the expectations idea, built in: a reconcile that lists its Jobs right after creating one
// sees it); an update shows its answer; a delete hides the object. An entry lives until the
// store holds that object at the write's version or later (or, for a delete, no longer holds
// it), which the watch brings within milliseconds; a write the watch never brings back (the
// object is outside its selectors) lapses once every stream is past its version, or after
// LAPSE_MS when its version has no order.
// Pure bookkeeping over a KnownObjects: no I/O, no timer (entries are pruned as they are read).

import type { KubeObject } from "../kube/index.ts";
import { compareResourceVersions } from "../kube/index.ts";
import { nameKey } from "./keys.ts";
import { labelTest } from "./labels.ts";
import type { KnownObjects, ListOptions } from "./store.ts";

/** How long a write whose version has no order (or a delete answered without one) overlays the store at most. */
export const LAPSE_MS = 30_000;

interface Written {
  /** The object as the write's answer gave it; undefined: deleted. */
  object: KubeObject | undefined;
  /** A delete's object's uid, when its answer named it (an object of that name with another uid is a new one). */
  uid?: string | undefined;
  name: string;
  namespace: string | undefined;
  /** The answer's resourceVersion (a delete answered with a Status has none). */
  resourceVersion: string | undefined;
  /** ms (Date.now()) of the write, for LAPSE_MS. */
  at: number;
}

/** Pruned on every this many writes too, so that entries of objects never read again do not pile up. */
const PRUNE_EVERY = 64;

export class OwnWrites {
  private readonly written = new Map<string, Written>();
  private writes = 0;
  private readonly now: () => number;
  private readonly enabled: boolean;

  /** `enabled: false` keeps nothing (kobun.yaml reconcile.readOwnWrites: false): reads are the store's alone. */
  constructor(private readonly store: KnownObjects, options: { now?: () => number; enabled?: boolean } = {}) {
    this.now = options.now ?? Date.now;
    this.enabled = options.enabled ?? true;
    // The watch bringing an object settles our write of it at once: no entry outlives its use.
    if (this.enabled) store.subscribe((change) => this.noticed(change.object));
  }

  /** How many writes the store has not caught up with (for tests and diagnostics). */
  get pending(): number {
    this.prune();
    return this.written.size;
  }

  /** How many entries are held now, settled or not (for tests: what the watch settles without any read). */
  get kept(): number {
    return this.written.size;
  }

  /** A create's, update's, patch's or apply's answer (an answer carrying a deletion mark still exists). */
  wrote(answer: KubeObject): void {
    const { name, namespace, resourceVersion } = answer.metadata ?? {};
    if (!name) return;
    this.keep({ object: answer, name, namespace, resourceVersion, at: this.now() });
  }

  /** A delete that took the object away (`answer`: the object as the server returned it, if it did). */
  deleted(name: string, namespace: string | undefined | null, answer?: KubeObject): void {
    // Held by finalizers: it is still there, marked; the answer is its state.
    if (answer?.metadata?.deletionTimestamp && answer.metadata.finalizers?.length) return this.wrote(answer);
    const status = answer?.kind === "Status";
    // What the answer does not say of the object, our own earlier write of it may (a create not yet watched).
    const earlier = this.written.get(nameKey(namespace, name))?.object?.metadata;
    const named = status ? (answer as { details?: { uid?: string } }).details?.uid : answer?.metadata?.uid;
    const uid = named ?? earlier?.uid;
    const resourceVersion = (status ? undefined : answer?.metadata?.resourceVersion) ?? earlier?.resourceVersion;
    this.keep({ object: undefined, uid, name, namespace: namespace ?? undefined, resourceVersion, at: this.now() });
  }

  /** The object as the store holds it, or as our newer write left it. */
  get(name: string, namespace?: string | null): KubeObject | undefined {
    const key = nameKey(namespace, name);
    const entry = this.written.get(key);
    if (entry && !this.settled(entry)) return entry.object;
    if (entry) this.written.delete(key);
    return this.store.get(name, namespace);
  }

  /** The store's objects with our newer writes laid over them: created ones added, deleted ones left out. */
  list(options: ListOptions = {}): KubeObject[] {
    this.prune();
    if (this.written.size === 0) return this.store.list(options);
    const over = new Map(this.written);
    const wanted = selection(options);
    const found: KubeObject[] = [];
    for (const object of this.store.list(options)) {
      const key = nameKey(object.metadata.namespace, object.metadata.name ?? "");
      const entry = over.get(key);
      if (!entry) found.push(object);
      else {
        over.delete(key);
        if (entry.object && wanted(entry.object)) found.push(entry.object);
      }
    }
    for (const entry of over.values()) if (entry.object && wanted(entry.object)) found.push(entry.object);
    return found;
  }

  private keep(entry: Written): void {
    if (!this.enabled) return;
    if (++this.writes % PRUNE_EVERY === 0) this.prune();
    const key = nameKey(entry.namespace, entry.name);
    const previous = this.written.get(key);
    // Two writes answered out of order: the older answer never hides the newer one.
    const newer = previous?.resourceVersion;
    if (newer && entry.resourceVersion && older(entry.resourceVersion, newer)) return;
    this.written.set(key, entry);
  }

  /** The store changed an object: our write of it may be settled now. */
  private noticed(object: KubeObject): void {
    const key = nameKey(object.metadata?.namespace, object.metadata?.name ?? "");
    const entry = this.written.get(key);
    if (entry && this.settled(entry)) this.written.delete(key);
  }

  private prune(): void {
    for (const [key, entry] of this.written) if (this.settled(entry)) this.written.delete(key);
  }

  /** The store has caught up with the write (or the write lapsed). */
  private settled(entry: Written): boolean {
    const { name, namespace, resourceVersion } = entry;
    if (this.now() - entry.at >= LAPSE_MS) return true;
    if (entry.object === undefined) return goneFrom(this.store, entry);
    if (resourceVersion === undefined) return false;
    return this.store.caughtUp(resourceVersion, { name, namespace });
  }
}

/**
 * A delete is settled when the store no longer holds the object and would have seen it if the watch
 * brought it late (every stream is past the object's last version: a create not yet delivered must
 * not show it again), or when the object of that name is another one (made again since).
 */
function goneFrom(store: KnownObjects, entry: Written): boolean {
  const { name, namespace, resourceVersion, uid } = entry;
  const held = store.get(name, namespace);
  if (held) {
    if (uid !== undefined) return held.metadata.uid !== uid;
    const rv = held.metadata.resourceVersion;
    // The answer's version is the object's last; its deletion has a later one: only a newer object settles it.
    return rv !== undefined && resourceVersion !== undefined && compareResourceVersions(rv, resourceVersion) === 1;
  }
  return resourceVersion === undefined || store.caughtUp(resourceVersion);
}

function older(a: string, b: string): boolean {
  return compareResourceVersions(a, b) === -1;
}

/** The list's selection as a test of one object (for the writes the store has not seen). */
function selection(options: ListOptions): (object: KubeObject) => boolean {
  const labels = options.labelSelector ? labelTest(options.labelSelector) : undefined;
  const { namespace } = options;
  return (object) =>
    (namespace == null || object.metadata.namespace === namespace) && (!labels || labels(object.metadata.labels));
}
