// Issue 15 (memory per object): a worker stays alive for `idleMs` after its last run (10 s by
// default, so after a burst every object of it has one). It keeps the item of its last run only
// when that run asked to run again; otherwise the body is the watcher's and the reconciler's
// business, and a second copy per object would be held for nothing.

import { expect, test } from "bun:test";
import { Workers } from "../../src/queueing/workers.ts";
import { PRODUCTION_TIMING } from "./timing.ts";

/** Pushes a fresh item per key, waits for the runs, and returns weak references to the items. */
async function runOnce(again: number | undefined): Promise<{ workers: Workers<{ body: string }>; refs: WeakRef<object>[] }> {
  const workers = new Workers<{ body: string }>({ ...PRODUCTION_TIMING,
    window: 0,
    idleMs: 60_000,
    async process() {
      return again === undefined ? undefined : { again };
    },
  });
  const refs: WeakRef<object>[] = [];
  for (let i = 0; i < 20; i++) {
    const item = { body: "x".repeat(1000) + i };
    refs.push(new WeakRef(item));
    workers.push(`key-${i}`, item);
  }
  await workers.settled();
  return { workers, refs };
}

test("an idle worker whose last run asked for nothing more keeps no reference to that run's item", async () => {
  const { workers, refs } = await runOnce(undefined);
  expect(workers.size).toBe(20); // still alive, waiting for a next item
  Bun.gc(true);
  expect(refs.filter((r) => r.deref() !== undefined)).toHaveLength(0);
  await workers.close(1000);
});

test("an idle worker whose last run asked to run again keeps the item for that re-run", async () => {
  const { workers, refs } = await runOnce(60_000);
  Bun.gc(true);
  expect(refs.filter((r) => r.deref() !== undefined)).toHaveLength(20);
  await workers.close(1000);
});
