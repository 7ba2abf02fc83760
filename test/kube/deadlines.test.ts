// Request deadlines are shared by the requests of one slot of time (kube/deadlines.ts): each
// request must still get at least its full `ms` from its own start, and a caller's abort must
// end its own requests only.

import { expect, test } from "bun:test";
import { Deadlines } from "../../src/kube/deadlines.ts";

function abortedAt(signal: AbortSignal): Promise<number> {
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(performance.now()), { once: true }));
}

test("each request gets its full deadline from its own start, however the slots fall", async () => {
  const deadlines = new Deadlines(200); // slots of 50 ms
  const firstAt = performance.now();
  const first = deadlines.start();
  const firstEnded = abortedAt(first.signal);
  await Bun.sleep(120); // the second starts in a later slot, while the first is in flight
  const secondAt = performance.now();
  const second = deadlines.start();
  const secondEnded = abortedAt(second.signal);
  const [firstMs, secondMs] = [(await firstEnded) - firstAt, (await secondEnded) - secondAt];
  expect(firstMs).toBeGreaterThanOrEqual(198);
  expect(secondMs).toBeGreaterThanOrEqual(198);
  expect(firstMs).toBeLessThan(2000);
  expect(secondMs).toBeLessThan(2000);
  expect(first.expired && second.expired).toBe(true);
  expect(first.signal.reason.name).toBe("TimeoutError");
});

test("a request that ended is not aborted by its deadline, and a later one is not cut by an earlier one's", async () => {
  const deadlines = new Deadlines(100);
  const done = deadlines.start();
  done.end();
  const later = deadlines.start(); // the same slot: it shares the signal, and ends in time too
  later.end();
  await Bun.sleep(250);
  const fresh = deadlines.start();
  expect(fresh.signal.aborted).toBe(false);
  expect(fresh.expired).toBe(false);
  fresh.end();
});

test("a caller's abort ends its own requests at once, not other callers'", () => {
  const deadlines = new Deadlines(60_000);
  const mine = new AbortController();
  const theirs = new AbortController();
  const a = deadlines.start(mine.signal);
  const b = deadlines.start(mine.signal);
  const c = deadlines.start(theirs.signal);
  const d = deadlines.start();
  mine.abort(new Error("stopping"));
  expect(a.signal.aborted && b.signal.aborted).toBe(true);
  expect(a.signal.reason.message).toBe("stopping");
  expect(a.expired || b.expired).toBe(false);
  expect(c.signal.aborted || d.signal.aborted).toBe(false);
  const after = deadlines.start(mine.signal); // an aborted caller's request starts aborted
  expect(after.signal.aborted && !after.expired).toBe(true);
  for (const deadline of [a, b, c, d, after]) deadline.end();
});

test("deadlines off: the caller's signal as it is", () => {
  const caller = new AbortController();
  expect(new Deadlines(0).start(caller.signal).signal).toBe(caller.signal);
});
