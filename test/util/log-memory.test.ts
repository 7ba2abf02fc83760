// memorySink keeps every line (what a test wants), or with `max` the last `max` only: a `run()`
// embedder's sink must not grow with the log for as long as the operator runs.

import { expect, test } from "bun:test";
import { Logger, memorySink } from "../../src/util/log.ts";

test("without max every line is kept; with max the last max, oldest first, and until still finds new lines", async () => {
  const all = memorySink("info");
  const kept = memorySink("info", "plain", { max: 3 });
  const logger = new Logger(kept);
  const everything = new Logger(all);
  for (let i = 1; i <= 10; i++) {
    logger.info(`line ${i}`);
    everything.info(`line ${i}`);
  }
  expect(all.lines).toHaveLength(10);
  expect(kept.lines).toHaveLength(3);
  expect(kept.lines.map((l) => l.match(/line \d+/)?.[0])).toEqual(["line 8", "line 9", "line 10"]);
  const coming = kept.until("line 11", { timeout: 1000 });
  logger.info("line 11");
  expect(await coming).toContain("line 11");
  expect(kept.lines).toHaveLength(3);
});

test("a max that is not a whole number ≥ 1 is refused by name", () => {
  expect(() => memorySink("info", "plain", { max: 0 })).toThrow("memorySink: max must be a whole number of lines ≥ 1 (got 0)");
  expect(() => memorySink("info", "plain", { max: 2.5 })).toThrow(/got 2\.5/);
});
