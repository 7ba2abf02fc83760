// Issue 15 (a burst's peak memory): a key waiting for a permit is plain data in a FIFO, not a
// worker suspended on a semaphore; at the peak of a 20k burst those frames were 23 MB of heap.

import { expect, test } from "bun:test";
import { Workers } from "../../src/queueing/workers.ts";
import { PRODUCTION_TIMING } from "./timing.ts";

test("keys waiting for a permit hold no worker; each runs once, with its newest item", async () => {
  const seen = new Map<string, number>();
  let mostWorkers = 0;
  let w!: Workers<number>;
  w = new Workers<number>({ ...PRODUCTION_TIMING,
    window: 50, // the two pushes of a key in one turn merge
    limit: 2,
    async process(key, item) {
      mostWorkers = Math.max(mostWorkers, w.workers);
      expect(seen.has(key)).toBe(false);
      seen.set(key, item);
      await Bun.sleep(0);
    },
  });
  for (let i = 0; i < 1000; i++) w.push(`k${i}`, 1);
  for (let i = 0; i < 1000; i++) w.push(`k${i}`, 2);
  expect(w.workers).toBeLessThanOrEqual(2);
  await w.settled();
  expect(mostWorkers).toBeLessThanOrEqual(2);
  expect(w.peak).toBe(2);
  expect(seen.size).toBe(1000);
  expect([...seen.values()].every((item) => item === 2)).toBe(true);
  expect(w.workers).toBe(0);
  expect(w.size).toBe(1000); // idle keys stay known for `idleMs`, as data
  await w.close(100);
});

test("ready keys start in the order they became ready; a newer item for a waiting key runs in its place", async () => {
  const order: string[] = [];
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const w = new Workers<number>({ ...PRODUCTION_TIMING,
    window: 0,
    limit: 1,
    async process(key) {
      order.push(key);
      if (key === "first") await gate;
    },
  });
  w.push("first", 0);
  for (let i = 0; i < 20; i++) w.push(`k${i}`, i);
  w.push("k3", 99); // a newer item keeps the key's place in line
  open();
  await w.settled();
  expect(order).toEqual(["first", ...Array.from({ length: 20 }, (_, i) => `k${i}`)]);
  await w.close(100);
});

test("close() while keys wait for a permit: the waiting ones never run, nothing is abandoned", async () => {
  const seen: string[] = [];
  const w = new Workers<number>({ ...PRODUCTION_TIMING,
    window: 0,
    limit: 1,
    process: (key, _item, signal) => new Promise<void>((resolve) => {
      seen.push(key);
      signal.addEventListener("abort", () => resolve(), { once: true });
    }),
  });
  for (let i = 0; i < 100; i++) w.push(`k${i}`, i);
  const report = await w.close(1000);
  expect(report.abandoned).toEqual([]);
  expect(seen).toEqual(["k0"]);
  expect(w.size).toBe(0);
});
