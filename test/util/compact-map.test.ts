// CompactMap (util/compact-map.ts) behaves as a Map of string keys: the same answers as a Map
// under a long random run of sets, deletes and reads (growing, shrinking, wrapping around the
// table's end, deleting inside clusters).

import { expect, test } from "bun:test";
import { CompactMap } from "../../src/util/compact-map.ts";

/** A small deterministic generator (mulberry32): the same run every time. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

for (const keys of [12, 100, 6000]) {
  test(`a CompactMap answers as a Map does through sets, deletes and reads, growing and shrinking (${keys} keys)`, () => {
    const next = random(keys);
    const compact = new CompactMap<number>();
    const map = new Map<string, number>();
    const rounds = 30_000;
    for (let round = 0; round < rounds; round++) {
      // Thirds: mostly sets (grow), then mostly deletes (shrink), then mixed.
      const third = Math.floor((round * 3) / rounds);
      const key = `uid-${Math.floor(next() * keys)}`;
      const r = next();
      if (third === 0 ? r < 0.8 : third === 1 ? r < 0.15 : r < 0.5) {
        compact.set(key, round);
        map.set(key, round);
      } else {
        expect(compact.delete(key)).toBe(map.delete(key));
      }
      const probe = `uid-${Math.floor(next() * keys)}`;
      expect(compact.get(probe)).toBe(map.get(probe));
      expect(compact.size).toBe(map.size);
    }
    expect(new Map(compact)).toEqual(map);
    expect([...compact.keys()].sort()).toEqual([...map.keys()].sort());
    expect([...compact.values()].sort()).toEqual([...map.values()].sort());
    for (const key of map.keys()) expect(compact.has(key)).toBe(true);
    for (const key of [...compact.keys()]) compact.delete(key);
    expect(compact.size).toBe(0);
    expect([...compact]).toEqual([]);
  });
}

test("setting a present key replaces its value and keeps one entry", () => {
  const compact = new CompactMap<string>();
  compact.set("a-b-c", "one");
  compact.set(["a", "b", "c"].join("-"), "two");
  expect(compact.size).toBe(1);
  expect([...compact.entries()]).toEqual([["a-b-c", "two"]]);
});
