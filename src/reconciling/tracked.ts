// What the reconciler keeps of one known object between its cycles, as ONE record: its life
// (life.ts: the phase, our last write), what its handlers keep (cycle.ts's ObjectState: memo,
// resume, running) and its namespace (what places it in a shard). At rest that is this record and its
// memo: with 20,000 objects known, every object kept per object costs about a megabyte of heap,
// and twice that in the blocks it is allocated in (issue 15). So our last write is two fields
// here, read by life.ts as the `wrote` it takes (a short-lived copy per read).
// The life's values stay those of the pure transitions (`live` takes one); only the record is reused.

import type { ReconcileState } from "./reconcile/reconcile-cycle.ts";
import type { KubeObject } from "../kube/index.ts";
import { CompactMap, linkedSignal } from "../util/index.ts";
import { IDLE, superseded, type Life, type Phase } from "./life.ts";

/** Why a cycle was aborted by its object's deletion (an AbortError, as handlers expect of an abort). */
export const DELETED = new DOMException("the object was deleted", "AbortError");
/** What a cycle aborted by its object's deletion comes to. */
export const WAS_DELETED: unique symbol = Symbol("deleted");

export class Tracked implements Life, ReconcileState {
  phase: Phase = IDLE;
  /** Our last write's resourceVersion and when it was made (ms): life.ts's `wrote`. */
  private rv: string | undefined = undefined;
  private at = 0;
  resume: ReconcileState["resume"] = "unseen";
  running: string | undefined = undefined;
  /** An on.reconcile's: its triggers at the last reconcile that needs no repeat, and its failures in a row. */
  reconciled: string | undefined = undefined;
  failures = 0;
  woken = false;
  requeueAt: number | undefined = undefined;
  /** Aborts the cycle running now (a deletion seen: nothing of it may be written); set only while one runs. */
  cycle: AbortController | undefined = undefined;

  constructor(
    readonly memo: Record<string, any>,
    readonly namespace: string | undefined,
  ) {}

  get wrote(): Life["wrote"] {
    return this.rv === undefined ? undefined : { rv: this.rv, at: this.at };
  }

  /** Takes the life a transition (life.ts) led to. */
  live(life: Life): void {
    this.phase = life.phase;
    this.rv = life.wrote?.rv;
    this.at = life.wrote?.at ?? 0;
  }

  /**
   * Runs a cycle with a signal that follows `signal` and that a deletion seen aborts (`cycle`,
   * with DELETED as its reason): then WAS_DELETED is what the cycle comes to, whatever it returned.
   */
  async untilDeleted<T>(
    signal: AbortSignal, work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T | typeof WAS_DELETED> {
    const deletion = linkedSignal(signal);
    this.cycle = deletion.controller;
    try {
      const result = await work(deletion.signal);
      return deletion.signal.reason === DELETED ? WAS_DELETED : result;
    } finally {
      this.cycle = undefined;
      deletion.dispose();
    }
  }

  /**
   * The watch's echo of our write carries the very resourceVersion we hold: keep its string, which
   * the watcher's inventory holds too, and let our write's answer go (one copy per object).
   */
  echoed(rv: string | undefined): void {
    if (rv !== undefined && this.rv === rv) this.rv = rv;
  }
}

/**
 * The objects a reconciler keeps, by uid: a record each, made at the object's first need (an event, a daemon's or
 * timer's memo), in a table of an entry per known object (util/compact-map.ts).
 */
export class TrackedObjects extends CompactMap<Tracked> {
  /** `memo`: the operator's memo (on.startup's), each object's memo starts as a shallow copy of it. */
  constructor(private readonly memo: Record<string, any> | undefined) {
    super();
  }

  /** A newly known object: idle, unseen, with a memo that starts from the settings' memo. */
  track(uid: string, namespace: string | undefined): Tracked {
    const tracked = new Tracked({ ...this.memo }, namespace);
    this.set(uid, tracked);
    return tracked;
  }

  /** The memo an object's handlers, daemons and timers share. */
  memoOf(uid: string, namespace: string | undefined): Record<string, any> {
    return (this.get(uid) ?? this.track(uid, namespace)).memo;
  }

  /** Workers' tasks (`<name>/<uid>`) as shutdown reports them: which handler on which object was left running. */
  named(tasks: readonly string[]): string[] {
    return tasks.map((task) => {
      const running = this.get(task.slice(task.lastIndexOf("/") + 1))?.running;
      return running ? `handler ${running} (${task})` : task;
    });
  }

  /** Forgets what is kept of the objects `which` picks. */
  forget(which: (object: Pick<KubeObject, "metadata">) => boolean): void {
    const uids: string[] = [];
    for (const [uid, { namespace }] of this) if (which({ metadata: { uid, namespace } })) uids.push(uid);
    for (const uid of uids) this.delete(uid); // not while iterating: the table moves entries on delete
  }
}

/**
 * For an item that waited behind its busy object: whether it needs no cycle now (life.ts's `superseded`), unless
 * it is a wake or its object was woken meanwhile (an on.reconcile runs again whatever the versions say).
 */
export function skips(
  tracked: Tracked | undefined, item: { type: string; object: KubeObject; wake?: true }, now: number,
): boolean {
  if (item.wake || tracked?.woken) return false;
  return superseded(tracked, item.type === "deleted", item.object.metadata.resourceVersion, now);
}
