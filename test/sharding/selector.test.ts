// The hash, the shard ranges and the shardSelector string of KEP-5866, as pure functions.
import { expect, test } from "bun:test";
import { fnv1a64, objectHash } from "../../src/sharding/hash.ts";
import { HASH_SPACE, inRanges, mergedRanges, shardOf, shardRange } from "../../src/sharding/ranges.ts";
import { buildShardSelector, hexBound, parseShardSelector, serverApplied, ShardSelectorError } from "../../src/sharding/selector.ts";

test("FNV-1a 64 matches the published test vectors, over UTF-8 bytes", () => {
  expect(fnv1a64("")).toBe(0xcbf29ce484222325n);
  expect(fnv1a64("a")).toBe(0xaf63dc4c8601ec8cn);
  expect(fnv1a64("foobar")).toBe(0x85944171f73967e8n);
  expect(fnv1a64("é")).not.toBe(fnv1a64("\u00e9".normalize("NFD")));
});

test("FNV-1a 64 in 16-bit limbs equals the bigint definition, for uids and for any UTF-8 text", () => {
  const encoder = new TextEncoder();
  const definition = (value: string) => {
    let hash = 0xcbf29ce484222325n;
    for (const byte of encoder.encode(value)) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & ((1n << 64n) - 1n);
    return hash;
  };
  const texts = Array.from({ length: 3000 }, (_, i) => (i % 2 ? crypto.randomUUID() : Array.from({ length: i % 50 }, () => String.fromCodePoint(Math.floor(Math.random() * 0x1ffff))).join("")));
  expect(texts.filter((t) => fnv1a64(t) !== definition(t))).toEqual([]);
  expect(fnv1a64("é")).toBe(definition("é"));
});

test("an object hashes by its uid, or by its namespace (absent: the empty string)", () => {
  const o = { metadata: { uid: "0865617c-7e4f-4154-8da1-580268d5a31d", namespace: "default" } };
  expect(objectHash(o, "uid")).toBe(fnv1a64(o.metadata.uid));
  expect(objectHash(o, "namespace")).toBe(fnv1a64("default"));
  expect(objectHash({ metadata: { name: "cluster-scoped" } }, "namespace")).toBe(0xcbf29ce484222325n);
});

test("shard ranges cut [0, 2^64) into contiguous pieces; powers of two fall on KEP-5866's examples", () => {
  expect(shardRange(2, 4)).toEqual({ start: 0x8000000000000000n, end: 0xc000000000000000n });
  for (const n of [1, 3, 7, 16]) {
    expect(shardRange(0, n).start).toBe(0n);
    expect(shardRange(n - 1, n).end).toBe(HASH_SPACE);
    for (let i = 1; i < n; i++) expect(shardRange(i, n).start).toBe(shardRange(i - 1, n).end);
  }
  expect(() => shardRange(4, 4)).toThrow("shard index 4 is outside 0..3");
  expect(() => shardRange(0, 0)).toThrow("shard count must be a positive integer, got 0");
});

test("shardOf puts every hash, boundaries included, in the one range that holds it", () => {
  for (const n of [1, 3, 7, 16]) {
    for (let i = 0; i < n; i++) {
      const { start, end } = shardRange(i, n);
      expect(shardOf(start, n)).toBe(i);
      expect(shardOf(end - 1n, n)).toBe(i);
    }
  }
});

test("owned shards that touch merge into one range", () => {
  expect(mergedRanges([3, 0, 1], 4)).toEqual([{ start: 0n, end: 0x8000000000000000n }, { start: 0xc000000000000000n, end: HASH_SPACE }]);
  expect(mergedRanges([], 4)).toEqual([]);
  expect(inRanges(0x8000000000000000n, mergedRanges([0, 1], 4))).toBe(false);
  expect(inRanges(0x7fffffffffffffffn, mergedRanges([0, 1], 4))).toBe(true);
});

test("the selector is built in the server's normal form and parses back", () => {
  const selector = buildShardSelector("uid", mergedRanges([0, 3], 4));
  expect(selector).toBe("shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')");
  expect(parseShardSelector(selector)).toEqual({ key: "uid", ranges: mergedRanges([0, 3], 4) });
  expect(buildShardSelector("namespace", [shardRange(0, 1)])).toBe("shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')");
  expect(hexBound(255n)).toBe("0x00000000000000ff");
  expect(() => buildShardSelector("uid", [])).toThrow("at least one range");
});

test("parsing refuses what is not the normal form, naming the term", () => {
  expect(() => parseShardSelector("shardRange(object.metadata.uid, '0x0', '0x1')")).toThrow(ShardSelectorError);
  expect(() => parseShardSelector("shardRange(object.metadata.uid, '0x8000000000000000', '0x0000000000000000')")).toThrow("must be less than end");
  expect(() => parseShardSelector("shardRange(object.metadata.uid, '0x0000000000000000', '0x1000000000000000') || shardRange(object.metadata.namespace, '0x0000000000000000', '0x1000000000000000')")).toThrow("same field");
});

test("the echo tells whether the server applied the selector: equal yes, absent no, different an error", () => {
  const selector = buildShardSelector("uid", [shardRange(0, 2)]);
  expect(serverApplied(selector, { resourceVersion: "1", shardInfo: { selector } })).toBe(true);
  expect(serverApplied(selector, { resourceVersion: "1" })).toBe(false);
  expect(() => serverApplied(selector, { shardInfo: { selector: buildShardSelector("uid", [shardRange(1, 2)]) } })).toThrow("not the requested");
});
