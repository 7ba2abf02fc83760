// Keys that become due in the same turn of the event loop are started one after the other; when
// the first one's process() aborts the workers (synchronously, before its first await), the
// others of that turn must not start: their slots were dropped by the abort.

import { expect, test } from "bun:test";
import { Workers } from "../../src/queueing/index.ts";
import { PRODUCTION_TIMING } from "./timing.ts";

test("an abort while a turn's due keys start leaves the rest of that turn unstarted", async () => {
  const parent = new AbortController();
  const started: string[] = [];
  const workers = new Workers<string>({ ...PRODUCTION_TIMING,
    window: 100,
    signal: parent.signal,
    process: async (key) => {
      started.push(key);
      if (key === "a") parent.abort();
    },
  });
  workers.push("a", "1");
  workers.push("b", "1");
  workers.push("c", "1");
  // The turn they were due in (an immediate queued before these) has passed after these two.
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
  expect(started).toEqual(["a"]);
  await workers.close(1000);
  await workers.settled();
});
