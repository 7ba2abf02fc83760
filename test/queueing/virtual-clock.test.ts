// The queue on a virtual clock (util/clock.ts): a requested re-run waits in handler time (it
// fires when the clock is advanced to it, not before), the queue marks work while a key is busy
// or waiting, and a re-run that waited at least a batch window runs without another window of
// real time (hours of handler time pass in real ms; a window after each would only slow a test).

import { expect, test } from "bun:test";
import { Workers } from "../../src/queueing/workers.ts";
import { useClock, VirtualClock } from "../../src/util/index.ts";
import { PRODUCTION_TIMING } from "./timing.ts";

test("a re-run after 60 s waits for the virtual clock, then runs without a second of real window", async () => {
  const time = new VirtualClock(0);
  const restore = useClock(time);
  const runs: number[] = [];
  let ran!: () => void;
  let next = new Promise<void>((resolve) => (ran = resolve));
  const workers = new Workers<string>({ ...PRODUCTION_TIMING, window: 1000, async process() {
    runs.push(time.now());
    ran();
    await Promise.resolve();
    return { again: 60_000 };
  } });
  try {
    workers.push("a", "item");
    expect(time.counts().inProgress).toBe(1); // waiting for its turn is work
    await next;
    await time.idle();
    expect(time.nextDue()).toBe(60_000); // asked for in handler time, not fired by the machine's
    next = new Promise<void>((resolve) => (ran = resolve));
    const before = performance.now();
    time.fireNext();
    await next;
    expect(performance.now() - before).toBeLessThan(900); // not after the 1000 ms window
    expect(runs).toEqual([0, 60_000]);
  } finally {
    await workers.close(100);
    restore();
  }
});
