// The virtual clock of handler time: timers fire in order of when they are due (then of when
// they were set), one per fireNext, only when advanced to; time only moves forward; sleeps end
// on abort; work marks and tracked runs (not while they sleep) tell a driver when the firing's
// work is over; one virtual clock at a time.

import { expect, test } from "bun:test";
import { clock, realClock, sleep, useClock, VirtualClock } from "../../src/util/index.ts";

test("timers fire one per fireNext, in order of due time then of setting, never past the limit", () => {
  const time = new VirtualClock(1_000);
  const fired: string[] = [];
  time.timer(3_000, () => fired.push("c@4000"));
  time.timer(1_000, () => fired.push("a@2000"));
  time.timer(1_000, () => fired.push("b@2000"));
  const cancel = time.timer(2_000, () => fired.push("cancelled"));
  cancel();
  expect(time.nextDue()).toBe(2_000);
  expect(time.fireNext(1_999)).toBe(false);
  expect(time.now()).toBe(1_000);
  expect(time.fireNext(3_500)).toBe(true);
  expect(fired).toEqual(["a@2000"]);
  expect(time.now()).toBe(2_000);
  expect(time.fireNext(3_500)).toBe(true);
  expect(time.fireNext(3_500)).toBe(false);
  expect(fired).toEqual(["a@2000", "b@2000"]);
  time.moveTo(3_500);
  expect(time.counts().waiting).toBe(1);
  expect(() => time.moveTo(5_000)).toThrow("a timer is due at 4000, before 5000: fire it first (fireNext)");
  expect(() => time.moveTo(3_000)).toThrow("time moves forward only (now 3500, asked 3000)");
});

test("a sleep ends when advanced to, or false at once on abort; a timer of 0 ms fires without advancing", async () => {
  const time = new VirtualClock(0);
  const stop = new AbortController();
  const slept = time.sleep(60_000);
  const stopped = time.sleep(60_000, stop.signal);
  stop.abort();
  expect(await stopped).toBe(false);
  expect(time.counts().waiting).toBe(1); // the aborted sleep's timer is gone
  time.fireNext();
  expect(await slept).toBe(true);
  expect(time.now()).toBe(60_000);
  const due = time.sleep(0);
  expect(time.counts().inProgress).toBe(1); // due now: work until it has fired
  expect(await due).toBe(true);
  expect(time.counts().inProgress).toBe(0);
  expect(time.now()).toBe(60_000);
});

test("work marks: idle() resolves when the last one ends, `begun` counts every start", async () => {
  const time = new VirtualClock(0);
  await time.idle();
  const first = time.working();
  const second = time.working();
  let idle = false;
  const waiting = time.idle().then(() => (idle = true));
  first();
  first(); // ending twice counts once
  await Promise.resolve();
  expect(idle).toBe(false);
  second();
  await waiting;
  expect(idle).toBe(true);
  expect(time.counts()).toEqual({ inProgress: 0, begun: 2, waiting: 0 });
});

test("begins() resolves when the next piece of work begins, and not before", async () => {
  const time = new VirtualClock(0);
  let begun = false;
  const next = time.begins().then(() => (begun = true));
  await Promise.resolve();
  expect(begun).toBe(false);
  const done = time.working();
  await next;
  expect(begun).toBe(true);
  done();
});

test("tracked work counts while it runs, not while it sleeps on the clock, again once it wakes", async () => {
  const time = new VirtualClock(0);
  let step!: () => void;
  const stepped = new Promise<void>((resolve) => (step = resolve));
  const seen: number[] = [];
  const run = time.track(async () => {
    seen.push(time.counts().inProgress); // running: 1
    const sleeping = time.sleep(1_000);
    step();
    await sleeping;
    seen.push(time.counts().inProgress); // awake: 1 again
    await new Promise((resolve) => setTimeout(resolve, 1)); // waiting on anything else is still work
  });
  await stepped;
  await time.idle(); // asleep: not busy, so a driver may fire its timer
  expect(time.counts().inProgress).toBe(0);
  time.fireNext();
  expect(time.counts().inProgress).toBe(1); // busy from the moment it woke
  await run;
  expect(seen).toEqual([1, 1]);
  expect(time.counts().inProgress).toBe(0);
  // A sleep begun inside a run that has ended (a loop it started) counts nothing.
  let loop!: Promise<boolean>;
  await time.track(async () => void (loop = time.sleep(0).then(() => time.sleep(5_000))));
  await new Promise((resolve) => setTimeout(resolve, 5));
  expect(time.counts()).toMatchObject({ inProgress: 0, waiting: 1 });
  time.fireNext();
  expect(await loop).toBe(true);
  expect(time.counts().inProgress).toBe(0);
});

test("one virtual clock installed at a time; restoring puts the machine's back", () => {
  const a = new VirtualClock();
  const restore = useClock(a);
  try {
    expect(clock()).toBe(a);
    expect(() => useClock(new VirtualClock())).toThrow("a virtual clock is already installed in this process");
  } finally {
    restore();
  }
  expect(clock()).toBe(realClock);
  expect(realClock.working()).toBe(realClock.working()); // nothing counted on the machine's clock
  expect(realClock.sleep).toBe(sleep);
});
