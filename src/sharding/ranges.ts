// Shards: the hash space [0, 2^64) cut into N contiguous ranges `[start, end)`, shard i from
// floor(i·2^64/N) up to shard i+1's start (for a power of two these are KEP-5866's own
// examples). Owned shards that touch are merged, so a replica asks for few ranges.

export const HASH_SPACE = 1n << 64n;

export interface HashRange {
  /** Inclusive. */
  start: bigint;
  /** Exclusive; at most 2^64. */
  end: bigint;
}

/** The range of shard `index` of `count`. */
export function shardRange(index: number, count: number): HashRange {
  if (!Number.isInteger(count) || count < 1) {
    throw new RangeError(`shard count must be a positive integer, got ${count}`);
  }
  if (!Number.isInteger(index) || index < 0 || index >= count) {
    throw new RangeError(`shard index ${index} is outside 0..${count - 1}`);
  }
  const n = BigInt(count);
  return { start: (BigInt(index) * HASH_SPACE) / n, end: (BigInt(index + 1) * HASH_SPACE) / n };
}

/** Each shard's start, per shard count (kept: shardOf runs for every event of a sharded stream). */
const starts = new Map<number, bigint[]>();

function startsOf(count: number): bigint[] {
  let found = starts.get(count);
  if (!found) starts.set(count, (found = Array.from({ length: count }, (_, i) => shardRange(i, count).start)));
  return found;
}

/** The shard of `count` that `hash` falls in. */
export function shardOf(hash: bigint, count: number): number {
  const from = startsOf(count);
  // floor(hash·N / 2^64) can be one too low at a start that the division rounded down: step up then.
  let index = Number((hash * BigInt(count)) >> 64n);
  while (index + 1 < count && hash >= from[index + 1]!) index++;
  return index;
}

/** The ranges of a set of shards, touching ones merged, in hash order. */
export function mergedRanges(shards: Iterable<number>, count: number): HashRange[] {
  const sorted = [...new Set(shards)].sort((a, b) => a - b);
  const out: HashRange[] = [];
  for (const index of sorted) {
    const range = shardRange(index, count);
    const last = out[out.length - 1];
    if (last && last.end === range.start) last.end = range.end;
    else out.push({ ...range });
  }
  return out;
}

/** Is `hash` inside one of `ranges`? */
export function inRanges(hash: bigint, ranges: readonly HashRange[]): boolean {
  return ranges.some((r) => r.start <= hash && hash < r.end);
}
