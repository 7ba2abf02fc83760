// The streams of one (resource, namespace) of a sharded replica, laid over the owned shards so
// that a change of them touches only the shards that changed (issue 16): the streams of shards
// still held keep running (no LIST, no event missed), shards given up stop being delivered, and
// shards taken start from the current state.
// - The server applies `shardSelector`: one stream per batch of shards taken together (its
//   ranges joined by `||`, the measured choice of one selector over one stream per range), with
//   a fresh LIST of those ranges only. A shard given up leaves its batch at once (its events
//   are dropped here), and the batch's stream relists with the ranges it has left (the same
//   watcher, so objects gone meanwhile are seen deleted), so that it stops receiving the
//   shards it gave up; a batch with none left closes its stream. Every owned shard is in exactly
//   one batch, so no object arrives twice.
// - The server ignores it: one stream of everything, filtered here. Shards taken make it relist
//   (the same watcher, so objects gone meanwhile are seen deleted): what it already had of them
//   may predate the old owner's last writes, since its events may lag far behind the Lease
//   watch that heard of the handover, and their handlers would run again on stale bodies.
//   Their events wait for that LIST; the shards kept go on meanwhile as a relist goes (no-ops).
// - A resource watched whole (on.reconcile's children, owned or watched: runtime/reconcile-wiring.ts):
//   every replica runs one stream of all of it, unfiltered, for its events wake parents of any shard.
//   Each take relists it, and holds the handlers until that LIST is through (as an index's take does),
//   so that a parent taken over is reconciled only against children at least as new as the old owner's
//   last writes: its watch may lag them, and its overlay of own writes is the old owner's, not ours.

import type { IndexedStream } from "../handling/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import { buildShardSelector, mergedRanges, type Sharding, type ShardKey } from "../sharding/index.ts";
import { aborted } from "../util/index.ts";
import type { TaskScope } from "../util/index.ts";
import type { WatchEvent } from "../watching/index.ts";

/** What one stream of the layout needs to know of its part of the shards. */
export interface StreamPart {
  /** Names the stream apart from its siblings (health, readiness); undefined for the only one. */
  label?: string;
  /** The selector its every (re)start sends; undefined: none (filtered here). */
  shardSelector?: () => string | undefined;
  /**
   * Aborts when the stream must relist with a narrower selector (its batch gave shards up); taken afresh at each
   * start.
   */
  restartSignal?: () => AbortSignal;
  /** Is this object's event for this stream to deliver (its shard in this part, and owned now)? */
  accepts(object: Pick<KubeObject, "metadata">): boolean;
  /** Sees every event of the stream before it is filtered (the client-side path follows its LISTs). */
  saw?(event: WatchEvent): void;
  /**
   * The stream waits out a freeze (true) or is about to list again (false): the take holds pause with it, as its
   * first LIST's does.
   */
  paused?(paused: boolean): void;
  /** Later batches do not hold readiness up: the replica was ready before it took them. */
  first: boolean;
}

/** Opens one stream of `part` until `signal` aborts. */
export type OpenStream = (part: StreamPart, signal: AbortSignal) => Promise<void>;

/**
 * Told true while no stream of the layout runs because no shard is owned (a standby: nothing
 * to wait for, so the index hold lets go), false when one starts again (its first LIST holds).
 */
export type Quiet = (quiet: boolean) => void;

/**
 * A take's hold on the handlers (an index's stream): ended when its LIST is through; paused while the stream waits
 * out a freeze.
 */
type TakenHold = Pick<IndexedStream, "end" | "paused">;

/**
 * Holds the handlers (for the indexes) from a take until the LIST of the shards taken is through; undefined: nothing
 * indexed.
 */
export type TakeHold = () => TakenHold | undefined;

interface Batch { shards: Set<number>; controller: AbortController; narrowed: AbortController }

/** The streams of one (resource, namespace) to lay over the owned shards. */
export interface ShardedStream {
  resource: Resource;
  /** They run until it ends. */
  within: TaskScope;
  /** The task's name, before each batch's label. */
  name: string;
  open: OpenStream;
  /** Hears when no stream of them runs (no shard owned) and when one runs again. */
  quiet?: Quiet;
  takeHold?: TakeHold;
}

/** How a sharded replica lays a resource's streams over its shards (runtime/ wires it to the Leases). */
export interface ShardedLayout {
  serve(stream: ShardedStream): void;
}

export interface ShardStreamsOptions extends Omit<ShardedStream, "resource"> {
  sharding: Sharding;
  key: ShardKey;
  shards: number;
  /** The server applies `shardSelector`: a stream per batch of shards taken; else one stream, filtered here. */
  serverSide: boolean;
  /** Every shard's objects, on every replica (see the header): one stream, relisted at each take. */
  whole?: boolean;
}

/** Lays the streams of one (resource, namespace) over the owned shards until `within` ends. */
export function serveShardStreams(options: ShardStreamsOptions): void {
  const { open, quiet = () => {}, takeHold = () => undefined } = options;
  // The client-side stream always runs: while no shard is owned it waits out the freeze, which quiets it.
  if (options.whole) filteredStream(options, open, takeHold, true);
  else if (options.serverSide) rangeStreams(options, open, quiet);
  else filteredStream(options, open, takeHold, false);
}

function rangeStreams(
  options: { sharding: Sharding; key: ShardKey; shards: number; within: TaskScope; name: string },
  open: OpenStream, quiet: Quiet,
): void {
  const { sharding, within } = options;
  const batches = new Set<Batch>();
  let opened = 0;
  const start = (shards: number[]) => {
    const batch: Batch = {
      shards: new Set(shards), controller: new AbortController(), narrowed: new AbortController(),
    };
    batches.add(batch);
    // Read at each (re)start: after the batch gave shards up, only the ranges it has left.
    const selector = () => buildShardSelector(options.key, mergedRanges(batch.shards, options.shards));
    const label = `shards ${shards.join(",")}`;
    const first = opened++ === 0;
    const part: StreamPart = {
      label, first, shardSelector: selector, restartSignal: () => batch.narrowed.signal,
      accepts: (object) => inBatch(sharding, batch, object),
    };
    within.spawn(`${options.name} ${label}`, (s) => open(part, AbortSignal.any([s, batch.controller.signal])));
  };
  const apply = (owned: readonly number[]) => {
    const held = new Set(owned);
    for (const batch of batches) {
      const before = batch.shards.size;
      for (const shard of batch.shards) if (!held.has(shard)) batch.shards.delete(shard);
      if (batch.shards.size === before) continue;
      if (batch.shards.size > 0) {
        const narrowed = batch.narrowed;
        batch.narrowed = new AbortController();
        narrowed.abort();
        continue;
      }
      batches.delete(batch);
      batch.controller.abort();
    }
    const covered = new Set([...batches].flatMap((b) => [...b.shards]));
    const taken = owned.filter((shard) => !covered.has(shard));
    if (taken.length > 0 && !within.signal.aborted) {
      if (batches.size === 0) quiet(false); // before its stream starts: its first LIST holds the handlers
      start(taken);
    } else if (batches.size === 0) quiet(true);
  };
  follow(sharding, within, apply);
}

/** One stream of everything, filtered by the owned shards here; `whole`: not filtered (every shard's objects). */
function filteredStream(
  options: { sharding: Sharding; within: TaskScope; name: string }, open: OpenStream, takeHold: TakeHold,
  whole: boolean,
): void {
  const { sharding, within } = options;
  let held = new Set(sharding.owned);
  let restart = new AbortController();
  /** Shards taken since the stream's last LIST began: dropped until the LIST the take asked for. */
  const unlisted = new Set<number>();
  /** The handlers held for takes: those waiting for their LIST to begin, and those in it. */
  let waiting: TakenHold[] = [];
  let listing: TakenHold[] = [];
  /**
   * The stream waits out a freeze: a take's hold starts paused, as the stream's own does (it lists only when the
   * freeze ends).
   */
  let frozen = false;
  const paused = (now: boolean) => {
    frozen = now;
    for (const hold of [...waiting, ...listing]) hold.paused(now);
  };
  const saw = (event: WatchEvent) => {
    if (event.type === "relist-start") {
      unlisted.clear();
      listing = [...listing, ...waiting];
      waiting = [];
    } else if (event.type === "relist-done") {
      for (const hold of listing.splice(0)) hold.end();
    }
  };
  const accepts = (object: Pick<KubeObject, "metadata">) => {
    if (whole) return true;
    const shard = sharding.shardOf(object);
    return sharding.leases.holds.has(shard) && (unlisted.size === 0 || !unlisted.has(shard));
  };
  const part: StreamPart = { first: true, saw, accepts, paused, restartSignal: () => restart.signal };
  // Whole: the handlers wait for its first LIST too (a reconcile must not find its children missing at start-up).
  const first = whole ? takeHold() : undefined;
  if (first) waiting.push(first);
  within.spawn(options.name, (s) => open(part, s));
  const release = () => {
    for (const hold of [...waiting.splice(0), ...listing.splice(0)]) hold.end();
  };
  follow(sharding, within, (owned) => {
    const taken = owned.filter((shard) => !held.has(shard));
    held = new Set(owned);
    if (owned.length === 0) release(); // a standby: nothing to wait for (its next take lists anyway)
    if (taken.length === 0) return;
    if (!whole) for (const shard of taken) unlisted.add(shard);
    const hold = takeHold();
    if (hold) {
      if (frozen) hold.paused(true);
      waiting.push(hold);
    }
    const previous = restart;
    restart = new AbortController();
    previous.abort(); // a stream waiting out a freeze lists anyway when it starts
  });
  void aborted(within.signal).then(release);
}

/** In the batch, and still worked on here (a shard being handed over left the holds first): one hash per event. */
function inBatch(sharding: Sharding, batch: Batch, object: Pick<KubeObject, "metadata">): boolean {
  const shard = sharding.shardOf(object);
  return batch.shards.has(shard) && sharding.leases.holds.has(shard);
}

/** Applies the owned shards now and at each change, until `within` ends. */
function follow(sharding: Sharding, within: TaskScope, apply: (owned: readonly number[]) => void): void {
  apply(sharding.owned);
  const off = sharding.onChange(apply);
  void aborted(within.signal).then(off);
}
