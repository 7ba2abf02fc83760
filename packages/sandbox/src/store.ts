// The object store and its event history. One global, monotonically increasing
// resourceVersion (integer strings, like etcd's revision); a bounded history of change
// events that watches replay from; compaction; and subscribers (the open watches).

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
  /** watches may resume from any RV >= historyFloor */
  historyFloor = 1;
  /** continue tokens from before this RV are expired (set by compact()) */
  compactedRV = 0;
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
    if (this.history.length > this.historySize) {
      const drop = this.history.length - this.historySize;
      this.historyFloor = this.history[drop - 1]!.rv;
      this.history.splice(0, drop);
    }
    for (const s of this.subscribers) s(ev);
  }

  /** events strictly after rv, or undefined when rv is older than what is retained */
  since(rv: number): ChangeEvent[] | undefined {
    if (rv < this.historyFloor) return undefined;
    return this.history.filter((e) => e.rv > rv);
  }

  /** the oldest resourceVersion a watch can still start from (for "too old" messages) */
  oldestAvailable(): number {
    return this.historyFloor;
  }

  compact(): void {
    this.history = [];
    this.historyFloor = this.rv;
    this.compactedRV = this.rv;
  }

  subscribe(fn: (ev: ChangeEvent) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  static same(a: any, b: any): boolean {
    return deepEqual(a, b);
  }
}
