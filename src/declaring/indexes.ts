// What a handler sees of an index (`ctx.indexes.<id>`, registered with `on.index`): the
// interface only. handling/indexes.ts keeps the indexes and implements it.

/** One index as handlers see it: every object's value under a key, in the order they came. */
export interface Index<V = unknown> extends Iterable<[string, V[]]> {
  /** The values of every object that put one under `key` (empty when none). */
  get(key: string): V[];
  has(key: string): boolean;
  keys(): IterableIterator<string>;
  /** The number of keys. */
  readonly size: number;
}
