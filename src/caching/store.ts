// Store: the one set of known objects of one watched resource, after kube-rs's reflector Store and
// controller-runtime's informer cache. Its watch streams write it, each through a shelf of its own
// (shelf.ts); everything that reads known objects reads it through `KnownObjects`: by name, by
// namespace and labels, the resourceVersion held for an object, and a bounded wait until the store
// has caught up with a resourceVersion (a write's answer: reads never staler than our own writes).
// What it holds is what the watches see (their server-side selectors applied), as a reflector's
// store does: the layout's own filters (shards owned, namespaces served) act on delivery, after it.
// Memory: a known object costs one slot of its shelf's table and what is kept (a body, or an
// identity when no reader needs bodies); the lookup by name costs a slot of a compact table and
// the name's string per object, and is built on the first read by name, so a store no one reads
// by name never pays for it.

import { compareResourceVersions, notOlder } from "../kube/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import { CompactMap } from "../util/index.ts";
import { Identity } from "./identity.ts";
import { nameKey, type Kept } from "./keys.ts";
import { labelTest } from "./labels.ts";
import { objectOf, Shelf, type ShelfOwner } from "./shelf.ts";

/** A change of the store: an object put (listed, added, modified) or taken (deleted, or not seen by a relist). */
export interface StoreChange {
  type: "put" | "delete";
  /** The object as the watch delivered it (its whole body, whatever the store keeps of it). */
  object: KubeObject;
  /** What a put replaced, where the store keeps bodies (its body before this change): an owner it left, say. */
  previous?: KubeObject;
}

export interface ListOptions {
  /** Only this namespace's objects; undefined or null: every namespace. */
  namespace?: string | null;
  /** As a LIST's `labelSelector` (labels.ts). */
  labelSelector?: string;
}

/** Which object a wait is about (optional), and how long it may last. */
export interface CatchUpOptions {
  object?: { name: string; namespace?: string | null };
  signal: AbortSignal;
  timeoutMs: number;
}

/**
 * The read side of a store. Objects read are the store's own: read them, never change them.
 * With `keeps: "identity"` they are identities (apiVersion, kind, metadata's name, namespace, uid,
 * resourceVersion, labels, finalizers, deletionTimestamp, ownerReferences), made afresh per read.
 */
export interface KnownObjects {
  readonly resource: Resource;
  readonly keeps: "bodies" | "identity";
  /** How many objects are known. */
  readonly size: number;
  /** The oldest resourceVersion every stream's state is complete at; undefined until each has listed once. */
  readonly resourceVersion: string | undefined;
  get(name: string, namespace?: string | null): KubeObject | undefined;
  list(options?: ListOptions): KubeObject[];
  /** An object by its uid (the key its shelf keeps it under). */
  byUid(uid: string): KubeObject | undefined;
  /** The resourceVersion held for an object; undefined when it is not known. */
  versionOf(name: string, namespace?: string | null): string | undefined;
  /**
   * Whether the store reflects `resourceVersion` or later: for `object`, it holds that object at
   * that version or a later one; otherwise (or when it does not hold it) every stream is past it.
   */
  caughtUp(resourceVersion: string, object?: CatchUpOptions["object"]): boolean;
  /** Resolves true once caughtUp; false when `timeoutMs` passes or `signal` aborts first (then read through). */
  until(resourceVersion: string, options: CatchUpOptions): Promise<boolean>;
  /** Hears every change, synchronously, as the stream writes it; returns the unsubscribe. Keep it short. */
  subscribe(listener: (change: StoreChange) => void): () => void;
}

interface Waiter {
  caughtUp(): boolean;
  done(caughtUp: boolean): void;
}

export class Store implements KnownObjects, ShelfOwner {
  readonly keeps: "bodies" | "identity";
  private readonly shelves = new Set<Shelf>();
  /** namespace/name → what is kept: built on the first read by name (see the header). */
  private byName: CompactMap<Kept> | undefined;
  private readonly listeners = new Set<(change: StoreChange) => void>();
  private readonly waiters = new Set<Waiter>();

  constructor(readonly resource: Resource, options: { keeps?: "bodies" | "identity" } = {}) {
    this.keeps = options.keeps ?? "bodies";
  }

  /** A shelf for one watch stream of this resource (the write side: its Watcher's only). */
  shelf(label?: string): Shelf {
    const shelf = new Shelf(this, label);
    this.shelves.add(shelf);
    return shelf;
  }

  get size(): number {
    let size = 0;
    for (const shelf of this.shelves) size += shelf.objects.size;
    return size;
  }

  get resourceVersion(): string | undefined {
    let oldest: string | undefined;
    for (const shelf of this.shelves) {
      const version = shelf.resourceVersion;
      if (version === undefined) return undefined;
      if (oldest === undefined || compareResourceVersions(version, oldest) === -1) oldest = version;
    }
    return oldest;
  }

  get(name: string, namespace?: string | null): KubeObject | undefined {
    const kept = this.lookup().get(nameKey(namespace, name));
    return kept === undefined ? undefined : objectOf(kept);
  }

  list(options: ListOptions = {}): KubeObject[] {
    const { namespace } = options;
    const labels = options.labelSelector ? labelTest(options.labelSelector) : undefined;
    // Two streams may hold one object for a moment (namespaces' streams giving way to a cluster-wide one).
    const seen = this.shelves.size > 1 ? new Set<string>() : undefined;
    const found: KubeObject[] = [];
    for (const shelf of this.shelves) {
      for (const [key, kept] of shelf.objects) {
        if (seen) {
          if (seen.has(key)) continue;
          seen.add(key);
        }
        if (namespace != null && namesOf(kept).namespace !== namespace) continue;
        if (labels && !labels(kept instanceof Identity ? kept.labels : kept.metadata.labels)) continue;
        found.push(objectOf(kept));
      }
    }
    return found;
  }

  byUid(uid: string): KubeObject | undefined {
    for (const shelf of this.shelves) {
      const kept = shelf.objects.get(uid);
      if (kept !== undefined) return objectOf(kept);
    }
    return undefined;
  }

  versionOf(name: string, namespace?: string | null): string | undefined {
    const kept = this.lookup().get(nameKey(namespace, name));
    if (kept === undefined) return undefined;
    return kept instanceof Identity ? kept.resourceVersion : kept.metadata.resourceVersion;
  }

  caughtUp(resourceVersion: string, object?: CatchUpOptions["object"]): boolean {
    if (object) {
      const held = this.versionOf(object.name, object.namespace);
      if (held !== undefined && notOlder(held, resourceVersion)) return true;
    }
    if (this.shelves.size === 0) return false;
    for (const shelf of this.shelves) {
      const version = shelf.resourceVersion;
      if (version === undefined || !notOlder(version, resourceVersion)) return false;
    }
    return true;
  }

  until(resourceVersion: string, options: CatchUpOptions): Promise<boolean> {
    const { object, signal, timeoutMs } = options;
    if (this.caughtUp(resourceVersion, object)) return Promise.resolve(true);
    if (signal.aborted || timeoutMs <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const giveUp = () => waiter.done(false);
      const timer = setTimeout(giveUp, timeoutMs);
      const waiter: Waiter = {
        caughtUp: () => this.caughtUp(resourceVersion, object),
        done: (caughtUp) => {
          clearTimeout(timer);
          signal.removeEventListener("abort", giveUp);
          this.waiters.delete(waiter);
          resolve(caughtUp);
        },
      };
      signal.addEventListener("abort", giveUp, { once: true });
      this.waiters.add(waiter);
    });
  }

  subscribe(listener: (change: StoreChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---- the shelves' side (ShelfOwner) ----

  changed(shelf: Shelf, key: string, object: KubeObject, kept: Kept | undefined, previous: Kept | undefined): void {
    if (this.byName) {
      if (kept !== undefined) this.byName.set(nameKeyOf(kept), kept);
      else if (previous !== undefined) this.unnamed(shelf, key, previous);
    }
    if (this.listeners.size > 0) {
      const change: StoreChange = { type: kept === undefined ? "delete" : "put", object };
      if (kept !== undefined && previous !== undefined && !(previous instanceof Identity)) change.previous = previous;
      for (const listener of this.listeners) listener(change);
    }
    if (this.waiters.size > 0) this.wake();
  }

  advanced(): void {
    if (this.waiters.size > 0) this.wake();
  }

  closed(shelf: Shelf): void {
    this.shelves.delete(shelf);
    if (this.byName) for (const [key, kept] of shelf.objects) this.unnamed(shelf, key, kept);
    if (this.waiters.size > 0) this.wake();
  }

  // ---- inside ----

  private lookup(): CompactMap<Kept> {
    if (this.byName) return this.byName;
    const byName = new CompactMap<Kept>();
    for (const shelf of this.shelves) for (const kept of shelf.objects.values()) byName.set(nameKeyOf(kept), kept);
    return (this.byName = byName);
  }

  /** `kept` left `shelf`: its name leaves the lookup, unless it names another object now, or another shelf holds it. */
  private unnamed(shelf: Shelf, key: string, kept: Kept): void {
    const name = nameKeyOf(kept);
    if (this.byName!.get(name) !== kept) return; // a newer object has the name (deleted and made again)
    for (const other of this.shelves) {
      const held = other === shelf ? undefined : other.objects.get(key);
      if (held !== undefined) return void this.byName!.set(name, held);
    }
    this.byName!.delete(name);
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) if (waiter.caughtUp()) waiter.done(true);
  }
}

function namesOf(kept: Kept): { readonly name?: string | undefined; readonly namespace?: string | undefined } {
  return kept instanceof Identity ? kept : kept.metadata;
}

function nameKeyOf(kept: Kept): string {
  const { name, namespace } = namesOf(kept);
  return nameKey(namespace, name ?? "");
}
