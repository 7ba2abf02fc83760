// Handler time on the machine's clock takes delays past setTimeout's limit (2^31-1 ms, ~24.8
// days), which setTimeout itself fires after 1 ms: a 30-day timer or sleep does not end within the
// next turns, and is cancelled (a sleep aborted) as any other. Nothing is due, so a short real
// window is watched.

import { expect, test } from "bun:test";
import { longTimeout, realClock, sleep } from "../../src/util/index.ts";

const MONTH_MS = 30 * 86_400_000;

test("a 30-day timer or sleep of the machine's clock does not fire at once; cancel and abort end them", async () => {
  const fired: string[] = [];
  const cancels = [
    longTimeout(MONTH_MS, () => fired.push("longTimeout")), realClock.timer(MONTH_MS, () => fired.push("timer")),
  ];
  const stop = new AbortController();
  const slept = sleep(MONTH_MS, stop.signal).then((done) => fired.push(`sleep ${done}`));
  const clockSlept = realClock.sleep(MONTH_MS, stop.signal).then((done) => fired.push(`clock sleep ${done}`));
  await Bun.sleep(50); // a window in which nothing may fire
  expect(fired).toEqual([]);
  for (const cancel of cancels) cancel();
  stop.abort();
  await Promise.all([slept, clockSlept]);
  expect(fired.sort()).toEqual(["clock sleep false", "sleep false"]);
  const short = Promise.withResolvers<void>();
  longTimeout(5, short.resolve);
  await short.promise; // a delay under the limit fires as setTimeout's
});
