// The operator's log sink summarises a line repeated identically (issue 30 #10): `limit` per
// window, then one line with repeated=K once the window has ended; lines that differ in any
// field are not touched; the JSON format stays JSON.

import { expect, test } from "bun:test";
import { Logger, memorySink } from "../../src/util/log.ts";
import { withoutRepeats } from "../../src/util/log-repeats.ts";

const WINDOW_MS = 200;

test("a line repeated identically past the limit in a window is left out and counted; the next line after the window is preceded by one repeated=K summary", async () => {
  const sink = memorySink("info");
  const logger = new Logger(withoutRepeats(sink, { limit: 3, windowMs: WINDOW_MS })).child({ timer: "busy" });
  for (let i = 0; i < 100; i++) logger.error("timer failed; retrying", { error: "busy", retryInMs: 100 });
  logger.error("timer failed; retrying", { error: "other" }); // another line: its own count
  expect(sink.lines).toHaveLength(4);
  expect(sink.lines.slice(0, 3).every((line) => line.endsWith("ERROR timer failed; retrying timer=busy error=busy retryInMs=100"))).toBe(true);
  await Bun.sleep(WINDOW_MS + 20); // past the window: a time bound, not a synchronisation
  logger.info("something else");
  expect(sink.lines).toHaveLength(6);
  expect(sink.lines[4]).toEndWith("ERROR timer failed; retrying timer=busy error=busy retryInMs=100 repeated=97");
  expect(sink.lines[5]).toEndWith("INFO  something else timer=busy");
  // A new window: written again.
  logger.error("timer failed; retrying", { error: "busy", retryInMs: 100 });
  expect(sink.lines).toHaveLength(7);
});

test("in JSON, the summary is a JSON line with the repeated line's fields and repeated", async () => {
  const sink = memorySink("info", "json");
  const logger = new Logger(withoutRepeats(sink, { limit: 1, windowMs: WINDOW_MS }));
  for (let i = 0; i < 10; i++) logger.warn("refused", { code: 401 });
  await Bun.sleep(WINDOW_MS + 20);
  logger.warn("refused", { code: 401 });
  expect(sink.lines).toHaveLength(3);
  const summary = JSON.parse(sink.lines[1]!);
  expect(summary).toMatchObject({ level: "warn", msg: "refused", code: 401, repeated: 9 });
  expect(JSON.parse(sink.lines[2]!).repeated).toBeUndefined();
});

test("the level set on the wrapped sink is the sink's (-v at run time reaches it)", () => {
  const sink = memorySink("info");
  const limited = withoutRepeats(sink);
  limited.level = "debug";
  expect(sink.level).toBe("debug");
  expect(new Logger(limited).enabled("debug")).toBe(true);
});

test("flush() writes the summaries still counted (the operator's stop calls it), so no count is lost in a quiet log", () => {
  const sink = memorySink("info");
  const limited = withoutRepeats(sink, { limit: 2, windowMs: 60_000 });
  const logger = new Logger(limited);
  for (let i = 0; i < 10; i++) logger.warn("refused", { code: 401 });
  logger.info("said once");
  expect(sink.lines).toHaveLength(3);
  limited.flush!();
  expect(sink.lines).toHaveLength(4);
  expect(sink.lines[3]).toEndWith("WARN  refused code=401 repeated=8");
  limited.flush!(); // nothing held back any more
  expect(sink.lines).toHaveLength(4);
});
