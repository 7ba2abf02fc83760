// A request's deadline counts its end once: a second end() must not release the slot that
// another request of the same slot still holds (its deadline would then never fire).

import { expect, test } from "bun:test";
import { Deadlines } from "../../src/kube/deadlines.ts";

test("ending one request's deadline twice leaves the other requests of its slot their deadline", async () => {
  const deadlines = new Deadlines(100); // slots of 25 ms
  const ended = deadlines.start();
  const waiting = deadlines.start(); // the same slot
  expect(waiting.signal).toBe(ended.signal);
  ended.end();
  ended.end();
  const fired = new Promise<boolean>((resolve) => {
    waiting.signal.addEventListener("abort", () => resolve(true), { once: true });
    setTimeout(() => resolve(false), 2000);
  });
  await Bun.sleep(40); // past the slot: the next start closes it, with `waiting` still in it
  const later = deadlines.start();
  expect(await fired).toBe(true);
  expect(waiting.expired).toBe(true);
  expect(later.signal).not.toBe(waiting.signal);
  waiting.end();
  later.end();
});
