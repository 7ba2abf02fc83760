// What a handler sees of an index (`ctx.indexes.<id>`, registered with `on.index`): the
// interface, and the keys it takes. handling/indexes.ts keeps the indexes and implements it.

/**
 * A key of an index: a string, a number, a boolean, null, or a tuple of them (Kopf's keys are any
 * hashable, `(namespace, name)` included). Compared by value: `["default", "web"]` finds what an
 * index fn put under another array with the same items.
 */
export type IndexKey = string | number | boolean | null | readonly IndexKey[];

/** What an index fn returns for one object: { key: value }, or, for keys that are not strings, a Map or pairs. */
export type IndexEntries =
  | Record<string, unknown>
  | ReadonlyMap<IndexKey, unknown>
  | readonly (readonly [IndexKey, unknown])[];

/**
 * One index as handlers see it: every object's value under a key, in the order of their latest events (a
 * changed object moves to the end). `K` types the keys (`ctx.indexes.byOwner as Index<string, [string, string]>`);
 * by default any key.
 */
export interface Index<V = unknown, K extends IndexKey = IndexKey> extends Iterable<[K, V[]]> {
  /** The values of every object that put one under `key` (empty when none). */
  get(key: K): V[];
  has(key: K): boolean;
  /** The keys as the index fns gave them (a tuple key comes back as an array). */
  keys(): IterableIterator<K>;
  /** The number of keys. */
  readonly size: number;
}
