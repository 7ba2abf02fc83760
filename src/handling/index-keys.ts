// The keys of the indexes (`on.index`): a string, number, boolean, null, or a tuple of them, compared
// by value. Each is kept under one string: a string that does not start with NUL as itself (the
// common key costs nothing), anything else as NUL + its JSON, which is canonical for these values
// (no objects, so no key order; a finite number has one spelling). An index fn's result is read
// here too: a record, a Map, or a list of pairs.

import type { IndexEntries, IndexKey } from "../declaring/index.ts";

const TAGGED = "\u0000";

/** The one string `key` is kept under; a key of another type is an error that names it. */
export function encodeKey(key: IndexKey): string {
  if (typeof key === "string" && !key.startsWith(TAGGED)) return key;
  checkKey(key, key);
  return TAGGED + JSON.stringify(key);
}

/** A key kept as given: a tuple is copied and frozen, so the index fn cannot change it afterwards. */
export function frozenKey(key: IndexKey): IndexKey {
  return Array.isArray(key) ? Object.freeze(key.map(frozenKey)) : key;
}

function checkKey(part: unknown, key: unknown): void {
  if (typeof part === "string" || typeof part === "boolean" || part === null) return;
  if (typeof part === "number" && Number.isFinite(part)) return;
  if (Array.isArray(part)) {
    for (const item of part) checkKey(item, key);
    return;
  }
  const shown = typeof part === "number" ? String(part) : typeof part === "object" ? "an object" : typeof part;
  throw new Error(
    `an index key is a string, a finite number, a boolean, null or an array of them (a tuple); got ${shown}` +
      (Object.is(part, key) ? "" : ` inside ${safeJson(key)}`), // Object.is: a NaN key is itself, not inside
  );
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** One entry of an object in an index: its key encoded, as given (frozen), and its value. */
export interface KeyedEntry {
  encoded: string;
  key: IndexKey;
  value: unknown;
}

const SHAPE = "an index fn returns { key: value }, a Map, or a list of [key, value] pairs, or nothing";

/**
 * An index fn's result as entries with their keys encoded (so a bad key throws here, where the caller
 * leaves the object out): a Map or a list of pairs as they are, a record's own entries.
 */
export function entriesOf(result: IndexEntries | undefined | null | void): KeyedEntry[] | undefined {
  if (result === undefined || result === null) return undefined;
  let pairs: Iterable<readonly [IndexKey, unknown]>;
  if (result instanceof Map) pairs = result as Map<IndexKey, unknown>;
  else if (Array.isArray(result)) {
    if (!result.every((pair) => Array.isArray(pair) && pair.length === 2)) throw new Error(SHAPE);
    pairs = result as [IndexKey, unknown][];
  } else if (typeof result === "object") pairs = Object.entries(result);
  else throw new Error(SHAPE);
  const entries: KeyedEntry[] = [];
  for (const [key, value] of pairs) entries.push({ encoded: encodeKey(key), key, value });
  return entries;
}
