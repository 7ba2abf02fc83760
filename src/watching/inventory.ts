// Inventory: the objects a watcher knows (by uid), kept across relists and across
// events() calls, and the bookkeeping of one relist: which objects it has seen so far.
// When a relist completes, whatever was known but not seen was deleted while we were not
// watching (a broken stream, a 410, a freeze), and is reported as a synthetic deletion, so
// a consumer that replays the events ends with exactly the server's set.
// Event order of a relist: relist-start, listed*, deleted(synthetic)*, relist-done.
// Every object passes through here as it is decoded, and loses `metadata.managedFields` on the
// way: the API server's field-ownership records are often larger than the rest of a small
// object, no part of an operator reads them, and kept per known object they were most of the
// memory it costs (issue 15). A handler that needs them reads the object from the server.
// A watch line's are cut from its text before it is parsed (kube/managed-fields.ts); `slim`
// drops what that left (LIST pages, text the cut does not apply to).
// What stays in the inventory once an event is delivered is only for the synthetic deletions:
// the whole body ("bodies", the default), or with "identity" the few fields a consumer of a
// deletion that does not read bodies needs (which object, its finalizers: reconciling's
// release of an object that left the watch), about a third of a small object's memory, kept as
// one record (identity.ts).

import { apiVersionOf, type KubeObject, type Resource } from "../kube/types.ts";
import { CompactMap } from "../util/compact-map.ts";
import { Finalizers, Identity } from "./identity.ts";
import { objectKey, vanished } from "./state.ts";
import type { WatcherOptions } from "./options.ts";
import type { WatchEvent } from "./types.ts";

export class Inventory {
  /** By uid: one entry per known object, so a compact table (util/compact-map.ts). */
  private readonly objects = new CompactMap<KubeObject | Identity>();
  private readonly finalizers = new Finalizers();
  /** The relist's seen uids: a compact table too, since a relist of 20,000 objects holds 20,000 at its end. */
  private relist: { seen: CompactMap<true> } | null = null;

  constructor(private readonly kept: NonNullable<WatcherOptions["keep"]> = "bodies") {}

  /** The objects known, by uid: the map itself when bodies are kept, else a snapshot of their identities. */
  get known(): ReadonlyMap<string, KubeObject> {
    if (this.kept === "bodies") return this.objects as ReadonlyMap<string, KubeObject>;
    return new Map([...this.objects].map(([key, kept]) => [key, objectOf(kept)]));
  }

  /** Forget any unfinished relist (a new events() call starts a new one). */
  reset(): void {
    this.relist = null;
  }

  /** A relist begins, or begins again (410 on a page, streaming-list fallback): one relist-start per relist. */
  begin(): WatchEvent[] {
    if (this.relist) {
      this.relist.seen = new CompactMap();
      return [];
    }
    this.relist = { seen: new CompactMap() };
    return [{ type: "relist-start" }];
  }

  listed(object: KubeObject): WatchEvent {
    slim(object);
    const key = objectKey(object);
    this.relist?.seen.set(key, true);
    this.keep(key, object);
    return { type: "listed", object };
  }

  *finish(resourceVersion: string): Generator<WatchEvent> {
    const seen = this.relist?.seen ?? new CompactMap<true>();
    this.relist = null;
    for (const kept of vanished(this.objects, seen)) {
      const object = objectOf(kept);
      this.objects.delete(objectKey(object));
      yield { type: "deleted", object, synthetic: true };
    }
    yield { type: "relist-done", resourceVersion };
  }

  /** A live change from the watch stream. */
  apply(type: "added" | "modified" | "deleted", object: KubeObject): void {
    slim(object);
    if (type === "deleted") this.objects.delete(objectKey(object));
    else this.keep(objectKey(object), object);
  }

  private keep(key: string, object: KubeObject): void {
    if (this.kept === "bodies") {
      this.objects.set(key, object);
      return;
    }
    // The map keeps the key string it was first given: the identity holds that one, not this event's copy.
    const before = this.objects.get(key);
    this.objects.set(key, Identity.of(object, before instanceof Identity ? before.uid : key, this.finalizers));
  }
}

function objectOf(kept: KubeObject | Identity): KubeObject {
  return kept instanceof Identity ? kept.object() : kept;
}

/** Drops what no consumer reads from a freshly decoded object (ours alone: it is changed in place). */
export function slim(object: KubeObject): KubeObject {
  if (object.metadata?.managedFields !== undefined) delete object.metadata.managedFields;
  return object;
}

/**
 * A real API server sends LIST items of built-in kinds without apiVersion/kind (only watch
 * events carry them): fill them in, so handlers, Events' involvedObject and the rule "never
 * post about Event objects" see the same body whichever way it arrived. A metadata-only
 * (`partial`) object comes as PartialObjectMetadata: it gets the resource's own too.
 */
export function typed(object: KubeObject, resource: Resource, partial?: boolean): KubeObject {
  if (!object.kind || partial) {
    object.apiVersion = apiVersionOf(resource);
    object.kind = resource.kind;
  }
  return object;
}
