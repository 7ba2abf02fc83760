// In-memory indexes kept from the watch streams (`on.index`): for each object, its index fn
// returns keys → values (or nothing); handlers of any resource read them as `ctx.indexes.<id>`.
// Kept by uid, so a relist replaces an object's entries (never duplicates them), and the
// watcher's (synthetic) deletions remove them. Updated when an event is accepted, i.e. before
// the handlers of that same event run (reconciling/ calls `observe` first).
// Handlers wait until the indexes are primed: every stream an index is kept from has completed
// its first LIST (`stream()`), so a handler of one resource never reads the index of another
// half-filled at start-up (a CR handler seeing none of the Pods that exist). A stream waiting
// out a freeze holds no one up; a stream that ends lets go. Only the streams of start-up prime:
// once primed, a stream started later (a namespace newly matching a glob) holds no one up, but
// for the shards a sharded replica takes (their objects were in no index here until then). A
// stream that does not list (an API server failing or not answering, retried) is named in a
// warning every `warnEveryMs`.
// Must never do I/O.

import { resourceName, type KubeObject, type Resource } from "../kube/index.ts";
import { silentLogger, type Logger } from "../util/index.ts";
import type { Index, IndexKey, ObjectContext } from "../declaring/index.ts";
import type { IndexSpec } from "../declaring/index.ts";
import { selectorMatches } from "../declaring/index.ts";
import { objectContext } from "./context.ts";
import { encodeKey, entriesOf, frozenKey, type KeyedEntry } from "./index-keys.ts";
import { objectFiltersPass } from "./selection.ts";

const NEVER = new AbortController().signal;

class ObjectIndex implements Index {
  /** encoded key → the key as given, and uid → value */
  private readonly byKey = new Map<string, { key: IndexKey; values: Map<string, unknown> }>();
  /** uid → its encoded keys, and its namespace (what a sharded replica's shards are told by, with the uid) */
  private readonly byObject = new Map<string, { keys: string[]; namespace: string | undefined }>();

  get size(): number {
    return this.byKey.size;
  }

  get(key: IndexKey): unknown[] {
    const values = this.byKey.get(encodeKey(key))?.values;
    return values ? [...values.values()] : [];
  }

  has(key: IndexKey): boolean {
    return this.byKey.has(encodeKey(key));
  }

  *keys(): IterableIterator<IndexKey> {
    for (const { key } of this.byKey.values()) yield key;
  }

  /** The uids of the objects that put a value under `key`. */
  uidsUnder(key: IndexKey): IterableIterator<string> {
    return (this.byKey.get(encodeKey(key))?.values ?? new Map<string, unknown>()).keys();
  }

  *[Symbol.iterator](): IterableIterator<[IndexKey, unknown[]]> {
    for (const { key, values } of this.byKey.values()) yield [key, [...values.values()]];
  }

  put(uid: string, namespace: string | undefined, entries: readonly KeyedEntry[] | undefined): void {
    this.remove(uid);
    if (!entries) return;
    const keys: string[] = [];
    for (const { encoded, key, value } of entries) {
      let under = this.byKey.get(encoded);
      if (!under) this.byKey.set(encoded, (under = { key: frozenKey(key), values: new Map() }));
      if (!under.values.has(uid)) keys.push(encoded);
      under.values.set(uid, value);
    }
    if (keys.length) this.byObject.set(uid, { keys, namespace });
  }

  remove(uid: string): void {
    const keys = this.byObject.get(uid)?.keys;
    if (!keys) return;
    this.byObject.delete(uid);
    for (const key of keys) {
      const under = this.byKey.get(key)!;
      under.values.delete(uid);
      if (under.values.size === 0) this.byKey.delete(key);
    }
  }

  /** Removes every object `drop` says (it sees the uid and namespace only). */
  removeWhere(drop: (object: Pick<KubeObject, "metadata">) => boolean): void {
    for (const [uid, { namespace }] of this.byObject) if (drop({ metadata: { uid, namespace } })) this.remove(uid);
  }
}

/** One watch stream an index is kept from, as the priming sees it. */
export interface IndexedStream {
  /** Its first LIST is complete (relist-done delivered): it holds no handler up any more. */
  listed(): void;
  /** It waits out a freeze, or has no shard to watch (true: holds no one up meanwhile), or is about to list (false). */
  paused(paused: boolean): void;
  /** It ended: holds no one up. */
  end(): void;
}

/** Every index of a registry; `view` is what handlers get as `ctx.indexes`. */
export class Indexes {
  readonly view: Readonly<Record<string, Index>>;
  private readonly kept = new Map<IndexSpec, ObjectIndex>();
  /** Streams of indexed resources not yet listed once (and not paused): what they are, since when. */
  private readonly unlisted = new Map<object, { stream: string; indexes: string; resource: string; since: number }>();
  private readonly waiters = new Set<() => void>();
  /** Set once every start-up stream has listed: later streams do not hold handlers again. */
  private wasPrimed = false;
  private warning: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly specs: readonly IndexSpec[],
    private readonly logger: Logger = silentLogger,
    private readonly warnEveryMs = 10_000,
    /** Resources read as a reconcile's children (owns, watches): their streams hold handlers as an index's do. */
    private readonly readFirst: (resource: Resource) => boolean = () => false,
  ) {
    const view: Record<string, Index> = {};
    for (const spec of specs) {
      const index = new ObjectIndex();
      this.kept.set(spec, index);
      view[spec.id] = index;
    }
    this.view = Object.freeze(view);
  }

  /**
   * Resources watched metadata-only, with the reason: their index fns reading ctx.spec or ctx.status get an error
   * saying it.
   */
  readonly metadataOnly = new Map<Resource, string>();

  /**
   * The uids of the objects of `resource` that index `id` keeps under `key` (ctx.cache.list's `index`);
   * undefined when there is no such index of that resource.
   */
  uidsUnder(id: string, key: IndexKey, resource: Resource): string[] | undefined {
    for (const [spec, index] of this.kept) {
      if (spec.id === id && selectorMatches(spec.wanted, resource)) return [...index.uidsUnder(key)];
    }
    return undefined;
  }

  /** Whether any index is kept from this resource's objects, or a reconcile reads them as children. */
  covers(resource: Resource): boolean {
    return this.specs.some((spec) => selectorMatches(spec.wanted, resource)) || this.readFirst(resource);
  }

  /**
   * A stream of an indexed resource starts (`where`: its namespace, or "cluster"): until it first
   * lists, handlers wait (see IndexedStream). `late`: it holds them even after start-up (a sharded
   * replica's stream of shards it took: their objects were in no index until it lists).
   */
  stream(resource?: Resource, where = "cluster", late = false): IndexedStream {
    const token = {};
    let done = this.wasPrimed && !late;
    const what = {
      stream: resource ? `${resourceName(resource)}@${where}` : where,
      resource: resource ? resourceName(resource) : where,
      indexes: this.specs
        .filter((spec) => !resource || selectorMatches(spec.wanted, resource))
        .map((spec) => spec.id)
        .join(", "),
    };
    const hold = (held: boolean) => {
      if (done) return;
      if (held) {
        if (!this.unlisted.has(token)) this.unlisted.set(token, { ...what, since: performance.now() });
        this.warning ??= setInterval(() => this.warnUnlisted(), this.warnEveryMs);
        this.warning.unref?.();
      } else if (this.unlisted.delete(token) && this.unlisted.size === 0) this.release();
    };
    hold(true);
    const finish = () => {
      hold(false);
      done = true;
    };
    return { listed: finish, end: finish, paused: (paused) => hold(!paused) };
  }

  /** Resolves true once every indexed stream has listed (at once when so), false if `signal` aborts first. */
  primed(signal: AbortSignal): Promise<boolean> | undefined {
    if (this.unlisted.size === 0) return undefined;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const onAbort = () => {
        this.waiters.delete(wake);
        resolve(false);
      };
      const wake = () => {
        signal.removeEventListener("abort", onAbort);
        resolve(true);
      };
      this.waiters.add(wake);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  private warnUnlisted(): void {
    const now = performance.now();
    for (const { stream, indexes, resource, since } of this.unlisted.values()) {
      if (now - since < this.warnEveryMs) continue;
      const waitingSeconds = Math.round((now - since) / 1000);
      if (indexes === "") {
        // No index of it: a resource a reconcile owns or watches (whole, under sharding), read through ctx.cache.
        this.logger.warn("handlers wait for what a reconcile reads: a stream of a resource it owns or watches has " +
          "not completed its first LIST", { resource, stream, waitingSeconds });
      } else {
        this.logger.warn("handlers wait for the indexes to be primed: a stream has not completed its first LIST",
          { indexes, stream, waitingSeconds });
      }
    }
  }

  private release(): void {
    this.wasPrimed = true;
    clearInterval(this.warning);
    this.warning = undefined;
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiting) wake();
  }

  /** An object of `resource` was listed, added or modified (`deleted` false), or deleted. */
  observe(resource: Resource, body: KubeObject, deleted: boolean): void {
    const uid = body.metadata?.uid;
    if (!uid) return;
    for (const [spec, index] of this.kept) {
      if (!selectorMatches(spec.wanted, resource)) continue;
      if (deleted) index.remove(uid);
      else index.put(uid, body.metadata.namespace, this.entriesOf(spec, resource, body));
    }
  }

  /**
   * Takes out every object `drop` says, in every index: a sharded replica's objects of the shards
   * it gave up (it hears none of their events until it takes them back, with a fresh state).
   */
  forget(drop: (object: Pick<KubeObject, "metadata">) => boolean): void {
    for (const index of this.kept.values()) index.removeWhere(drop);
  }

  private entriesOf(spec: IndexSpec, resource: Resource, body: KubeObject): KeyedEntry[] | undefined {
    try {
      const partial = this.metadataOnly.get(resource);
      let ctx: ObjectContext | undefined;
      const tools = partial ? { metadataOnly: partial } : {};
      const make = () => (ctx ??= objectContext(body, resource, {}, this.logger, NEVER, tools));
      if (!objectFiltersPass(spec, body, make)) return undefined;
      return entriesOf(spec.fn(make()));
    } catch (error) {
      // The object is left out of the index until its next event (not kept with stale entries).
      this.logger.error("index fn failed; the object is left out of the index", {
        index: spec.id, namespace: body.metadata.namespace, name: body.metadata.name, error,
      });
      return undefined;
    }
  }
}
