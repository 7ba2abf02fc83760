// The correlator's per-object token buckets (client-go's): a bucket used recently survives the
// LRU's eviction and keeps its count; an evicted one starts full again.

import { expect, test } from "bun:test";
import { EventCorrelator } from "../../src/posting/correlator.ts";

test("a recently used object's bucket outlives an older one's at the LRU's limit, and keeps what it spent", () => {
  const correlator = new EventCorrelator({ burst: 2, refillMs: 1e12, maxKeys: 2, now: () => 0 });
  expect(correlator.take("a")).toBe(true); // a: 1 left
  expect(correlator.take("b")).toBe(true); // b: 1 left
  expect(correlator.take("a")).toBe(true); // a: 0 left, and the most recent
  expect(correlator.take("c")).toBe(true); // evicts b, the least recent
  expect(correlator.take("a")).toBe(false); // a kept its empty bucket
  expect(correlator.take("b")).toBe(true); // b starts full again (evicting c)
  expect(correlator.take("b")).toBe(true);
  expect(correlator.take("b")).toBe(false);
});
