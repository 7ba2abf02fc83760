import { expect, test } from "bun:test";
import { Semaphore } from "../../src/util/semaphore.ts";

test("a semaphore hands permits out up to its limit, then to waiters first come, first served", async () => {
  const permits = new Semaphore(2);
  expect(permits.acquire()).toBeUndefined();
  expect(permits.acquire()).toBeUndefined();
  const order: string[] = [];
  const a = permits.acquire()!.then(() => order.push("a"));
  const b = permits.acquire()!.then(() => order.push("b"));
  expect(permits.inUse).toBe(2);
  permits.release();
  await a;
  permits.release();
  await b;
  expect(order).toEqual(["a", "b"]);
  expect(permits.inUse).toBe(2);
  permits.release();
  permits.release();
  expect(permits.inUse).toBe(0);
  expect(permits.peak).toBe(2);
});

test("grantAll lets every waiter through at once (on abort), each balanced by its release", async () => {
  const permits = new Semaphore(1);
  permits.acquire();
  const waiters = [permits.acquire()!, permits.acquire()!];
  permits.grantAll();
  await Promise.all(waiters);
  expect(permits.inUse).toBe(3);
  for (let i = 0; i < 3; i++) permits.release();
  expect(permits.inUse).toBe(0);
});
