// Shelf: one watch stream's part of a resource's store, and the store's write side. The watch
// stream that owns it (watching/'s Watcher) is its only writer: every object it lists or hears of
// is kept here by uid, across relists and freezes, for as long as the stream runs. Several streams
// can serve one resource (per namespace, per shard, a routed cluster-wide one): each writes its
// own shelf, so a relist's synthetic deletions stay within what that stream knew (a relist of
// namespace A never deletes namespace B's objects); the store reads across its shelves.
// One relist: begin, listed*, then finish hands out what was known but not seen (deleted while the
// stream was not watching: a broken stream, a 410, a freeze), taking each out as it is handed out,
// so a relist left half-way (a freeze while its deletions are delivered) reports the rest next time.
// What is kept of an object is its whole body ("bodies"), or its identity (identity.ts) when no
// reader needs bodies: the store decides, for all its shelves.

import type { KubeObject } from "../kube/index.ts";
import { CompactMap } from "../util/index.ts";
import { Finalizers, Identity } from "./identity.ts";
import { objectKey, vanished, type Kept } from "./keys.ts";

/** What a shelf tells its store (store.ts): the store's side of the write path. */
export interface ShelfOwner {
  readonly keeps: "bodies" | "identity";
  /** `object` was put on (`previous` undefined: it is new) or taken off `shelf`. */
  changed(shelf: Shelf, key: string, object: KubeObject, kept: Kept | undefined, previous: Kept | undefined): void;
  /** The shelf's stream reached a resourceVersion (or closed): waiters may be satisfied. */
  advanced(): void;
  /** The shelf closed: its objects leave the store. */
  closed(shelf: Shelf): void;
}

export class Shelf {
  /** By uid (namespace/name without one): one entry per known object, so a compact table (util/compact-map.ts). */
  readonly objects = new CompactMap<Kept>();
  private readonly finalizers = new Finalizers();
  /** The relist's seen keys: a compact table too, since a relist of 20,000 objects holds 20,000 at its end. */
  private relist: { seen: CompactMap<true> } | null = null;
  /**
   * The resourceVersion the stream's state is complete at: its last relist's, event's or bookmark's;
   * undefined before its first LIST completes.
   */
  private version: string | undefined;
  private open = true;

  constructor(private readonly owner: ShelfOwner, readonly label = "") {}

  /** Where the stream's state is complete (see `version`): what the store's waits compare. */
  get resourceVersion(): string | undefined {
    return this.version;
  }

  /** The objects known, by uid: the table itself when bodies are kept, else a snapshot of their identities. */
  get known(): ReadonlyMap<string, KubeObject> {
    if (this.owner.keeps === "bodies") return this.objects as ReadonlyMap<string, KubeObject>;
    return new Map([...this.objects].map(([key, kept]) => [key, objectOf(kept)]));
  }

  /** Forgets any unfinished relist (the stream starts a new one). */
  reset(): void {
    this.relist = null;
  }

  /** A relist begins, or begins again (410 on a page, a streaming list given up); true: a new one. */
  begin(): boolean {
    if (this.relist) {
      this.relist.seen = new CompactMap();
      return false;
    }
    this.relist = { seen: new CompactMap() };
    return true;
  }

  /** An object of the relist. */
  listed(object: KubeObject): void {
    const key = objectKey(object);
    this.relist?.seen.set(key, true);
    this.put(key, object);
  }

  /** The relist is complete at `resourceVersion`: yields what it did not see, taking each off as it goes. */
  *finish(resourceVersion: string): Generator<KubeObject> {
    const seen = this.relist?.seen ?? new CompactMap<true>();
    this.relist = null;
    for (const kept of vanished(this.objects, seen)) {
      const object = objectOf(kept);
      this.take(objectKey(object), object);
      yield object;
    }
    this.reached(resourceVersion);
  }

  /** A live change from the watch stream. */
  apply(type: "added" | "modified" | "deleted", object: KubeObject): void {
    const key = objectKey(object);
    if (type === "deleted") this.take(key, object);
    else this.put(key, object);
    const version = object.metadata?.resourceVersion;
    if (version) this.reached(version);
  }

  /** The stream is complete at `resourceVersion` (a BOOKMARK, the end of a relist). */
  reached(resourceVersion: string): void {
    this.version = resourceVersion;
    this.owner.advanced();
  }

  /** The stream ended for good: its objects leave the store (nothing was deleted: no change is told). */
  close(): void {
    if (!this.open) return;
    this.open = false;
    this.owner.closed(this);
  }

  private put(key: string, object: KubeObject): void {
    const before = this.objects.get(key);
    let kept: Kept = object;
    // The map keeps the key string it was first given: an identity holds that one, not this event's copy.
    if (this.owner.keeps === "identity") {
      kept = Identity.of(object, before instanceof Identity ? before.uid : key, this.finalizers);
    }
    this.objects.set(key, kept);
    this.owner.changed(this, key, object, kept, before);
  }

  private take(key: string, object: KubeObject): void {
    const before = this.objects.get(key);
    if (before === undefined) return;
    this.objects.delete(key);
    this.owner.changed(this, key, object, undefined, before);
  }
}

/** What a reader gets of a kept object: the body itself, or its identity as an object. */
export function objectOf(kept: Kept): KubeObject {
  return kept instanceof Identity ? kept.object() : kept;
}
