// The ready keys' two lines: news (a watch event) runs before re-checks (a relist's objects,
// re-runs), FIFO within each line; a re-check that becomes news moves up; with the lines off,
// plain FIFO. One permit, so the order of starts is the order of the lines.

import { describe, expect, test } from "bun:test";
import { Workers, type WorkersOptions } from "../../src/queueing/workers.ts";
import { PRODUCTION_TIMING } from "./timing.ts";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function waitFor(done: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** One permit; the first key holds it until `release`, so everything pushed meanwhile queues. */
function blockedQueue(extra: Partial<WorkersOptions<string>> = {}) {
  const started: string[] = [];
  const gate = deferred();
  const first = deferred();
  const workers = new Workers<string>({
    ...PRODUCTION_TIMING, window: 0, limit: 1, ...extra,
    async process(key) {
      started.push(key);
      if (key === "blocker") {
        first.resolve();
        await gate.promise;
      }
    },
  });
  workers.push("blocker", "blocker");
  return { workers, started, running: first.promise, release: gate.resolve };
}

describe("priority lines", () => {
  test("news runs before a backlog of re-checks, which keep their order", async () => {
    const q = blockedQueue();
    await q.running;
    for (let i = 0; i < 100; i++) q.workers.push(`listed-${i}`, "x", { immediate: true, priority: "low" });
    q.workers.push("new", "x");
    q.release();
    await q.workers.settled();
    expect(q.started[1]).toBe("new");
    expect(q.started.slice(2)).toEqual(Array.from({ length: 100 }, (_, i) => `listed-${i}`));
    await q.workers.close(100);
  });

  test("a re-check waiting in line that becomes news moves up, and runs once", async () => {
    const q = blockedQueue();
    await q.running;
    for (const key of ["a", "b", "c"]) q.workers.push(key, "old", { immediate: true, priority: "low" });
    q.workers.push("c", "news");
    q.release();
    await q.workers.settled();
    expect(q.started).toEqual(["blocker", "c", "a", "b"]);
    await q.workers.close(100);
  });

  test("news collapsed into a pending re-check keeps the high line", async () => {
    const q = blockedQueue();
    await q.running;
    q.workers.push("a", "listed", { priority: "low" });
    q.workers.push("b", "news");
    q.workers.push("b", "listed again", { priority: "low" }); // latest wins, but the news is not forgotten
    q.release();
    await q.workers.settled();
    expect(q.started).toEqual(["blocker", "b", "a"]);
    await q.workers.close(100);
  });

  test("a re-run due at once of a re-check waits behind news, as the re-check did", async () => {
    const started: string[] = [];
    let runs = 0;
    const workers: Workers<string> = new Workers<string>({
      ...PRODUCTION_TIMING, window: 0, limit: 1,
      async process(key) {
        started.push(key);
        if (key === "again" && ++runs === 1) {
          workers.push("blocker", "x"); // takes the one permit as this run ends
          return { again: 0 }; // ready at the next turn, while the blocker runs
        }
        if (key === "blocker") {
          // setImmediate callbacks run in order: the re-run's (armed before this run began) comes first.
          await new Promise((resolve) => setImmediate(resolve));
          workers.push("news", "x");
        }
      },
    });
    workers.push("again", "x", { priority: "low" });
    await waitFor(() => started.length === 4);
    expect(started).toEqual(["again", "blocker", "news", "again"]);
    await workers.close(100);
  });

  test("with the lines off, keys run in the order they became ready", async () => {
    const q = blockedQueue({ prioritized: false });
    await q.running;
    q.workers.push("listed", "x", { immediate: true, priority: "low" });
    q.workers.push("new", "x");
    q.release();
    await q.workers.settled();
    expect(q.started).toEqual(["blocker", "listed", "new"]);
    await q.workers.close(100);
  });
});

test("a re-run due at once continues in its item's line; news of a backlog key cannot be overtaken by it", async () => {
  const started: string[] = [];
  let first = true;
  const gate = deferred();
  const workers: Workers<string> = new Workers<string>({
    ...PRODUCTION_TIMING, window: 0, limit: 1,
    async process(key) {
      started.push(key);
      if (key === "blocker") await gate.promise;
      if (key.startsWith("listed")) await new Promise((resolve) => setImmediate(resolve)); // its I/O: a turn passes
      if (key === "new" && first) {
        first = false;
        return { again: 0 }; // e.g. the finalizer added first: the handlers run next
      }
    },
  });
  workers.push("blocker", "x");
  for (let i = 0; i < 3; i++) workers.push(`listed-${i}`, "x", { immediate: true, priority: "low" });
  workers.push("new", "x");
  gate.resolve();
  await workers.settled();
  await new Promise((resolve) => setImmediate(resolve));
  await workers.settled();
  // One backlog key may take the permit the re-run waits a turn for; the rest of the backlog waits behind it.
  expect(started.lastIndexOf("new")).toBeLessThan(started.indexOf("listed-1"));
  expect(started.filter((key) => key === "new").length).toBe(2);
  await workers.close(100);
});
