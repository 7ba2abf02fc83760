// Issue 15 (CPU per object), what one run of a key costs besides its work: the re-run every
// object's first cycle asks for at once (its finalizer went first) shares one next-turn callback
// instead of a timer each (a push before it still replaces it, as with a timer); and a run is
// no task of its own: close() names the keys still busy after the grace itself.

import { afterEach, expect, test } from "bun:test";
import { Workers } from "../../src/queueing/workers.ts";
import { PRODUCTION_TIMING } from "./timing.ts";

const realSetTimeout = globalThis.setTimeout;
afterEach(() => {
  globalThis.setTimeout = realSetTimeout;
});

test("re-runs asked for at once take no timer each: 1,000 keys run twice with no setTimeout", async () => {
  const runs = new Map<string, number[]>();
  const w = new Workers<number>({ ...PRODUCTION_TIMING,
    window: 0,
    idleMs: 0, // no reaper interval either
    async process(key, item) {
      const seen = runs.get(key) ?? [];
      seen.push(item);
      runs.set(key, seen);
      return seen.length === 1 ? { again: 0, item: item + 1 } : undefined;
    },
  });
  let timers = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    timers++;
    return realSetTimeout(...args);
  }) as typeof setTimeout;
  for (let i = 0; i < 1000; i++) w.push(`k${i}`, 1);
  await w.settled();
  // settled() does not wait for re-runs: wait for the second runs themselves.
  while ([...runs.values()].some((seen) => seen.length < 2)) await new Promise((resolve) => setImmediate(resolve));
  globalThis.setTimeout = realSetTimeout;
  expect(timers).toBe(0);
  expect([...runs.values()].every((seen) => seen.join() === "1,2")).toBe(true);
  await w.close(100);
});

test("a push before a re-run due at the next turn replaces it: the key runs once more, with the pushed item", async () => {
  const seen: number[] = [];
  const w = new Workers<number>({ ...PRODUCTION_TIMING,
    window: 0,
    async process(_key, item) {
      seen.push(item);
      return item === 1 ? { again: 0, item: 99 } : undefined;
    },
  });
  w.push("k", 1);
  while (seen.length < 1) await Promise.resolve();
  // The first run's outcome is taken in a later microtask; push right after it, before the next turn.
  await Promise.resolve();
  await Promise.resolve();
  w.push("k", 2);
  await w.settled();
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  expect(seen).toEqual([1, 2]);
  await w.close(100);
});

test("close() waits for busy keys up to the grace and names those still busy as <name>/<key>", async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const started = new Set<string>();
  const w = new Workers<number>({ ...PRODUCTION_TIMING,
    name: "handling kobunexamples",
    window: 0,
    async process(key, _item, signal) {
      started.add(key);
      if (key === "stubborn") return new Promise<void>(() => {}); // ignores its signal
      if (key === "slow") await held; // ends after the abort, within the grace
      else await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    },
  });
  for (const key of ["stubborn", "slow", "polite"]) w.push(key, 1);
  while (started.size < 3) await new Promise((resolve) => setImmediate(resolve));
  const closing = w.close(200);
  setTimeout(release, 20);
  const report = await closing;
  expect(report.abandoned).toEqual(["handling kobunexamples/stubborn"]);
  expect(w.workers).toBe(1);
});
