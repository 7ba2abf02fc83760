// OwnEchoes: the watch events of one resource that are only the echo of a write this operator made
// "blind" — a write by a reconcile that had not read that resource before it (reconciling/reconcile/
// echo-scope.ts decides). Such a write's answer is all its echo carries, and the reconcile that made it
// already planned without needing it: the echo wakes no owner (docs/reconcile.md, "What wakes a
// reconcile"). An event at any other version (someone else's change), a deletion and a relist's
// object are news and wake as always. A watch event that arrives while a blind write of its object
// is still unanswered is held until the answer tells whether it was that write's echo (the server
// may send the event before the answer); the write failing releases it.
// Pure bookkeeping: no I/O, no timer; bounded (ENTRIES_KEPT objects at most).

import type { KubeObject } from "../kube/index.ts";
import { compareResourceVersions } from "../kube/index.ts";
import { nameKey } from "./keys.ts";

/** How many objects' expected echoes are kept at most: a resource whose echoes never come must not pile them up. */
const ENTRIES_KEPT = 4096;

/** What one object's blind writes left to expect. */
interface Expected {
  /** Blind writes of it sent and not answered yet. */
  inFlight: number;
  /** The versions those writes were answered with, whose echoes are not in yet → the uid of the writer's object. */
  versions: Map<string, string>;
  /** Events that came while a write was in flight: their wakes, decided when the last answer comes. */
  held: { version: string | undefined; owner: string | undefined; wake: () => void }[];
}

/** What a write in flight is settled with: the server's answer, or nothing (it failed). */
export type EchoSettle = (answer?: KubeObject) => void;

export class OwnEchoes {
  private readonly expected = new Map<string, Expected>();

  /** How many objects have echoes expected or writes in flight (for tests and diagnostics). */
  get kept(): number {
    return this.expected.size;
  }

  /**
   * A blind write of the object (`name` unknown: a generateName create) is being sent by the reconcile of the
   * object whose uid is `writer`: events of it are held until the returned settle is called, once, with the
   * answer (or nothing when the write failed). Its echo will wake no reconcile of `writer`; others' it does.
   */
  sending(name: string | undefined, namespace: string | undefined | null, writer: string): EchoSettle {
    const sentKey = name ? nameKey(namespace, name) : undefined;
    if (sentKey) this.entry(sentKey).inFlight++;
    let settled = false;
    return (answer) => {
      if (settled) return;
      settled = true;
      const meta = answer?.metadata;
      const answerKey = meta?.name ? nameKey(meta.namespace, meta.name) : undefined;
      if (meta?.resourceVersion && answerKey) this.entry(answerKey).versions.set(meta.resourceVersion, writer);
      if (sentKey) this.answered(sentKey);
      if (answerKey && answerKey !== sentKey) this.release(answerKey, this.expected.get(answerKey));
    };
  }

  /**
   * A watch event of the resource, and the wake it would cause of the reconcile of `owner` (a uid): run now,
   * held (a blind write of the object is unanswered), or dropped (it is exactly the echo of a blind write
   * that `owner`'s own reconcile made).
   */
  route(type: string, object: KubeObject, owner: string | undefined, wake: () => void): void {
    const { name = "", namespace, resourceVersion } = object.metadata ?? {};
    const key = nameKey(namespace, name);
    const entry = this.expected.get(key);
    if (!entry) return wake();
    if (type === "deleted" || type === "listed") {
      // Gone, or re-listed after a gap: news either way; what was expected of it may never come.
      if (type === "deleted") entry.versions.clear();
      this.release(key, entry);
      return wake();
    }
    if (entry.inFlight > 0) {
      entry.held.push({ version: resourceVersion, owner, wake });
      return;
    }
    if (!this.echo(entry, resourceVersion, owner)) wake();
    this.release(key, entry);
  }

  /** Whether `version` is an expected echo of `owner`'s write (used up); older versions can no longer come. */
  private echo(entry: Expected, version: string | undefined, owner: string | undefined): boolean {
    if (version === undefined) return false;
    const hit = owner !== undefined && entry.versions.get(version) === owner;
    entry.versions.delete(version);
    for (const expected of entry.versions.keys()) {
      if (compareResourceVersions(expected, version) === -1) entry.versions.delete(expected);
    }
    return hit;
  }

  private answered(key: string): void {
    const entry = this.expected.get(key);
    if (!entry) return;
    entry.inFlight = Math.max(0, entry.inFlight - 1);
    this.release(key, entry);
  }

  /** With no write of it in flight: the held events' wakes run unless echoes; an empty entry goes. */
  private release(key: string, entry: Expected | undefined): void {
    if (!entry || entry.inFlight > 0) return;
    const held = entry.held;
    entry.held = [];
    for (const event of held) if (!this.echo(entry, event.version, event.owner)) event.wake();
    if (entry.versions.size === 0 && entry.held.length === 0) this.expected.delete(key);
  }

  private entry(key: string): Expected {
    let entry = this.expected.get(key);
    if (entry) return entry;
    if (this.expected.size >= ENTRIES_KEPT) this.evictOne();
    entry = { inFlight: 0, versions: new Map(), held: [] };
    this.expected.set(key, entry);
    return entry;
  }

  /** The oldest entry with nothing in flight (its echoes will then wake, as news would: never a lost wake). */
  private evictOne(): void {
    for (const [key, entry] of this.expected) {
      if (entry.inFlight > 0) continue;
      this.expected.delete(key);
      for (const event of entry.held) event.wake();
      return;
    }
  }
}
