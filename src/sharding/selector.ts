// The `shardSelector` string of KEP-5866: `shardRange(object.metadata.uid, '0x…', '0x…')`,
// several joined by ` || `, bounds as 0x plus 16 lowercase hex digits (the end of the whole
// space is `0x10000000000000000`), the only form kube-apiserver accepts. It answers a list
// with the selector it applied, in that same normal form, in `metadata.shardInfo.selector`:
// equal to what we sent means the server filtered; absent means it ignored the parameter (no
// feature gate, or an older server), and the client must filter by the same hash itself.

import type { ShardKey } from "./hash.ts";
import { HASH_SPACE, type HashRange } from "./ranges.ts";

const FIELD: Record<ShardKey, string> = { uid: "object.metadata.uid", namespace: "object.metadata.namespace" };

/** `0x` + 16 hex digits, or `0x10000000000000000` for 2^64. */
export function hexBound(value: bigint): string {
  if (value < 0n || value > HASH_SPACE) throw new RangeError(`a hash bound must be within [0, 2^64], got ${value}`);
  return `0x${value.toString(16).padStart(16, "0")}`;
}

/** The selector for `ranges` of `key`, in the server's normal form. */
export function buildShardSelector(key: ShardKey, ranges: readonly HashRange[]): string {
  if (ranges.length === 0) throw new RangeError("a shard selector needs at least one range");
  return ranges.map((r) => `shardRange(${FIELD[key]}, '${hexBound(r.start)}', '${hexBound(r.end)}')`).join(" || ");
}

export class ShardSelectorError extends Error {}

/** One bound in quotes: 16 hex digits, or the end of the whole space. */
const BOUND = String.raw`'0x([0-9a-f]{16}|10000000000000000)'`;
const RANGE = new RegExp(
  String.raw`^shardRange\(\s*object\.metadata\.(uid|namespace)\s*,\s*${BOUND}\s*,\s*${BOUND}\s*\)$`,
);

/** Parses a selector in the normal form (what we build and what the server echoes). */
export function parseShardSelector(selector: string): { key: ShardKey; ranges: HashRange[] } {
  let key: ShardKey | undefined;
  const ranges: HashRange[] = [];
  for (const part of selector.split("||").map((p) => p.trim())) {
    const match = RANGE.exec(part);
    if (!match) {
      throw new ShardSelectorError(
        `not a shardRange() term: ${JSON.stringify(part)} ` +
          "(expected shardRange(object.metadata.uid, '0x<16 hex digits>', '0x<16 hex digits>'))",
      );
    }
    const [, field, start, end] = match as unknown as [string, ShardKey, string, string];
    if (key !== undefined && field !== key) {
      throw new ShardSelectorError(`all ranges must use the same field, got ${key} and ${field}`);
    }
    key = field;
    const range = { start: BigInt(`0x${start}`), end: BigInt(`0x${end}`) };
    if (range.start >= range.end) {
      throw new ShardSelectorError(`range start ${hexBound(range.start)} must be less than end ${hexBound(range.end)}`);
    }
    ranges.push(range);
  }
  return { key: key!, ranges };
}

/**
 * Did the server apply `requested`? Reads a list response's `metadata.shardInfo.selector`: the
 * same selector means yes; no echo means no (the parameter was ignored); a different one is
 * reported, since the objects listed are then not the ones asked for.
 */
export function serverApplied(requested: string, listMetadata: unknown): boolean {
  const echo = (listMetadata as { shardInfo?: { selector?: unknown } } | undefined)?.shardInfo?.selector;
  if (echo === undefined) return false;
  if (echo === requested) return true;
  throw new ShardSelectorError(
    `the server applied shardSelector ${JSON.stringify(echo)}, not the requested ${JSON.stringify(requested)}`,
  );
}
