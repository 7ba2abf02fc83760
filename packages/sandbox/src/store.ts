// The object store and its event history. One global, monotonically increasing
// resourceVersion (integer strings, like etcd's revision); a bounded history of change
// events that watches replay from (the last `historySize`) and paged lists' snapshots are
// rebuilt from (a longer stretch, as etcd's history outlives the watch cache's); compaction;
// and subscribers (the open watches).

import { deepEqual } from "./patch.ts";

export type EventType = "ADDED" | "MODIFIED" | "DELETED";

export interface ChangeEvent {
  rv: number;
  /** resourceKey(group, plural) */
  res: string;
  ns: string;
  type: EventType;
  object: any;
  /** the previous state, for MODIFIED/DELETED (selector transitions) */
  prev?: any;
}

/** how many events a paged list's snapshot can be rebuilt across (at least the watchable history) */
const SNAPSHOT_EVENTS = 10_000;
/** how many events past that are dropped at once */
const SNAPSHOT_SLACK = 500;

export function objectKey(ns: string, name: string): string {
  return ns ? `${ns}/${name}` : name;
}

class Bucket {
  readonly items = new Map<string, any>();
  private sorted: string[] | undefined;
  keys(): string[] {
    if (!this.sorted) this.sorted = [...this.items.keys()].sort();
    return this.sorted;
  }
  set(key: string, body: any): void {
    if (!this.items.has(key)) this.sorted = undefined;
    this.items.set(key, body);
  }
  delete(key: string): void {
    if (this.items.delete(key)) this.sorted = undefined;
  }
}

export class Store {
  /** the current global resourceVersion */
  rv = 1;
  /** watches may resume from any RV >= historyFloor (the last `historySize` events: the watch cache's window) */
  historyFloor = 1;
  /** paged lists may continue from any RV >= snapshotFloor (etcd's longer history, until compacted) */
  private snapshotFloor = 1;
  /** the events after snapshotFloor: the last `historySize` of them are watchable */
  private history: ChangeEvent[] = [];
  private readonly buckets = new Map<string, Bucket>();
  private readonly subscribers = new Set<(ev: ChangeEvent) => void>();

  constructor(private readonly historySize: number) {}

  private bucket(res: string): Bucket {
    let b = this.buckets.get(res);
    if (!b) this.buckets.set(res, (b = new Bucket()));
    return b;
  }

  get(res: string, ns: string, name: string): any | undefined {
    return this.buckets.get(res)?.items.get(objectKey(ns, name));
  }

  /** objects of a resource in stable order (namespace/name), optionally in one namespace, after a key */
  list(res: string, ns?: string, afterKey?: string): { key: string; body: any }[] {
    const b = this.buckets.get(res);
    if (!b) return [];
    const out: { key: string; body: any }[] = [];
    for (const key of b.keys()) {
      if (afterKey !== undefined && key <= afterKey) continue;
      const body = b.items.get(key);
      if (ns && body?.metadata?.namespace !== ns) continue;
      out.push({ key, body });
    }
    return out;
  }

  /**
   * The objects of a resource as they were at `rv` (a paged list's snapshot, as etcd serves later pages at the
   * first page's revision): the current ones with every later change undone from the history; undefined when
   * the history no longer reaches back to `rv` (compacted). (An `rv` from before a custom resource was served
   * lists it empty: its objects were all made later.)
   */
  listAt(res: string, rv: number, ns?: string, afterKey?: string): { key: string; body: any }[] | undefined {
    if (rv >= this.rv) return this.list(res, ns, afterKey);
    if (rv < this.snapshotFloor) return undefined;
    let changed = false; // unchanged since rv (the common case): the current objects, without a rebuild
    for (let i = this.history.length - 1; i >= 0 && this.history[i]!.rv > rv && !changed; i--) {
      const ev = this.history[i]!;
      changed = ev.res === res && (!ns || ev.ns === ns);
    }
    if (!changed) return this.list(res, ns, afterKey);
    const state = new Map(this.list(res, ns).map((x) => [x.key, x.body]));
    for (let i = this.history.length - 1; i >= 0 && this.history[i]!.rv > rv; i--) {
      const ev = this.history[i]!;
      if (ev.res !== res || (ns && ev.ns !== ns)) continue;
      const key = objectKey(ev.ns, ev.object.metadata.name);
      if (ev.type === "ADDED" || ev.prev === undefined) state.delete(key); else state.set(key, ev.prev);
    }
    return [...state.keys()].sort().filter((key) => afterKey === undefined || key > afterKey)
      .map((key) => ({ key, body: state.get(key) }));
  }

  count(res: string, ns?: string): number {
    return this.list(res, ns).length;
  }

  nextRV(): number {
    return ++this.rv;
  }

  /** write a new state; the caller has already set metadata.resourceVersion = String(rv) */
  put(res: string, ns: string, name: string, body: any, type: "ADDED" | "MODIFIED", prev?: any): void {
    this.bucket(res).set(objectKey(ns, name), body);
    this.record({ rv: Number(body.metadata.resourceVersion), res, ns, type, object: body, prev });
  }

  remove(res: string, ns: string, name: string, finalBody: any): void {
    const b = this.buckets.get(res);
    const prev = b?.items.get(objectKey(ns, name));
    b?.delete(objectKey(ns, name));
    this.record({ rv: Number(finalBody.metadata.resourceVersion), res, ns, type: "DELETED", object: finalBody, prev });
  }

  /** forget every object of a resource (CRD removal), after DELETED events were emitted */
  dropResource(res: string): void {
    this.buckets.delete(res);
  }

  private record(ev: ChangeEvent): void {
    this.history.push(ev);
    // Dropped a slack's worth at a time: one splice of the array's head per write would move all of it each time.
    const drop = this.history.length - Math.max(this.historySize, SNAPSHOT_EVENTS);
    if (drop > SNAPSHOT_SLACK) this.snapshotFloor = this.history.splice(0, drop).at(-1)!.rv;
    const unwatchable = this.history.length - this.historySize;
    this.historyFloor = unwatchable > 0 ? this.history[unwatchable - 1]!.rv : this.snapshotFloor;
    for (const s of this.subscribers) s(ev);
  }

  /** events strictly after rv, or undefined when rv is older than what is retained */
  since(rv: number): ChangeEvent[] | undefined {
    if (rv < this.historyFloor) return undefined;
    let i = this.history.length;
    while (i > 0 && this.history[i - 1]!.rv > rv) i--;
    return this.history.slice(i);
  }

  /** the oldest resourceVersion a watch can still start from (for "too old" messages) */
  oldestAvailable(): number {
    return this.historyFloor;
  }

  compact(): void {
    this.history = [];
    this.historyFloor = this.snapshotFloor = this.rv;
  }

  subscribe(fn: (ev: ChangeEvent) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  static same(a: any, b: any): boolean {
    return deepEqual(a, b);
  }
}
