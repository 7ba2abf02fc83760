// A re-run asked for by process() must survive an item that arrived meanwhile and was skipped.

import { expect, test } from "bun:test";
import { Workers } from "../../src/queueing/workers.ts";
import { PRODUCTION_TIMING } from "./timing.ts";

test("a requested re-run still happens when the item pushed during processing is skipped", async () => {
  const runs: string[] = [];
  let rerun!: () => void;
  const rerunDone = new Promise<void>((r) => (rerun = r));
  let w!: Workers<string>;
  w = new Workers<string>({ ...PRODUCTION_TIMING,
    window: 0,
    skip: (_key, item) => item === "stale",
    async process(_key, item) {
      runs.push(item);
      if (runs.length === 1) {
        w.push("a", "stale"); // arrives while "a" is busy; skip() will drop it
        return { again: 10, item: "fresh" };
      }
      rerun();
    },
  });
  w.push("a", "first");
  const fired = await Promise.race([rerunDone.then(() => true), Bun.sleep(1000).then(() => false)]);
  expect(fired).toBe(true);
  expect(runs).toEqual(["first", "fresh"]);
  await w.close(100);
});
