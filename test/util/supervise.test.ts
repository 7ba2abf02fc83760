// supervise(): the loop every watch consumer runs in, tested with in-memory streams.

import { expect, test } from "bun:test";
import { supervise, type Delays } from "../../src/util/supervise.ts";

const noDelay: Delays = { next: () => 0, reset() {} };

/** A stream per attempt from a script: numbers are items, an Error is thrown, "end" waits for the abort. */
function scripted(attempts: (number | Error | "hang")[][]) {
  let n = 0;
  return async function* (signal: AbortSignal): AsyncGenerator<number> {
    const script = attempts[Math.min(n++, attempts.length - 1)]!;
    for (const step of script) {
      if (step instanceof Error) throw step;
      if (step === "hang") {
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        return;
      }
      yield step;
    }
  };
}

test("a failed stream is reported with its backoff and opened again; recovery is told once", async () => {
  const stop = new AbortController();
  const seen: number[] = [];
  const reports: { first: boolean; delayMs: number }[] = [];
  let recovered = 0;
  let delay = 0;
  await supervise(
    {
      open: scripted([[1, new Error("a")], [new Error("b")], [2, 3, new Error("stop now")]]),
      each: (item) => seen.push(item),
      delays: { next: () => ++delay, reset() {} },
      recovered: () => recovered++,
      failed: (error, retry) => {
        reports.push(retry);
        if ((error as Error).message === "stop now") return "stop";
      },
    },
    stop.signal,
  );
  expect(seen).toEqual([1, 2, 3]);
  expect(reports).toEqual([{ first: true, delayMs: 1 }, { first: false, delayMs: 2 }, { first: true, delayMs: 3 }]);
  expect(recovered).toBe(1);
});

test("an error thrown by `failed` ends the supervision with it (a 403 that ends the operator)", async () => {
  const fatal = new Error("fatal");
  const run = supervise(
    { open: scripted([[new Error("403")]]), each() {}, delays: noDelay, failed: () => { throw fatal; } },
    new AbortController().signal,
  );
  await expect(run).rejects.toBe(fatal);
});

test("aborting ends it at once, even in the middle of a backoff", async () => {
  const stop = new AbortController();
  let failures = 0;
  const backingOff = Promise.withResolvers<void>();
  const failed = () => {
    failures++;
    backingOff.resolve();
  };
  const run = supervise({ open: scripted([[new Error("down")]]), each() {}, delays: { next: () => 60_000, reset() {} }, failed }, stop.signal);
  await backingOff.promise;
  const started = performance.now();
  stop.abort();
  await run;
  expect(performance.now() - started).toBeLessThan(1000);
  expect(failures).toBe(1);
});

test("an attempt signal ends one attempt without a failure; `ready` gates each attempt", async () => {
  const stop = new AbortController();
  let restart = new AbortController();
  let opened = Promise.withResolvers<number>();
  let count = 0;
  let failed = 0;
  const gateReached = Promise.withResolvers<void>();
  const gate = Promise.withResolvers<void>();
  const run = supervise(
    {
      ready: async (signal) => {
        if (count === 2) {
          gateReached.resolve();
          await gate.promise; // the second restart waits for the gate
        }
        return !signal.aborted;
      },
      attemptSignals: () => [restart.signal],
      open: (signal) => {
        opened.resolve(++count);
        return scripted([["hang"]])(signal);
      },
      each() {},
      delays: noDelay,
      failed: () => void failed++,
    },
    stop.signal,
  );
  const next = async () => {
    const value = await opened.promise;
    opened = Promise.withResolvers<number>();
    return value;
  };
  expect(await next()).toBe(1);
  restart.abort();
  restart = new AbortController();
  expect(await next()).toBe(2);
  restart.abort();
  restart = new AbortController();
  await gateReached.promise;
  expect(count).toBe(2); // waiting at the gate, not opened
  gate.resolve();
  expect(await next()).toBe(3);
  stop.abort();
  await run;
  expect(failed).toBe(0);
});
