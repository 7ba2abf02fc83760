// The memory sink (kit.logs, and kobun's export for embedders) and the tee the kit writes through.

import { expect, test } from "bun:test";
import { Logger, memorySink, teeSink } from "../../src/util/log.ts";

test("until resolves with a line already written, or with the first matching line to come", async () => {
  const sink = memorySink("info");
  const logger = new Logger(sink);
  logger.info("first", { n: 1 });
  expect(await sink.until("first")).toMatch(/INFO  first n=1$/);
  const later = sink.until(/second n=\d/g);
  logger.info("other");
  logger.info("second", { n: 2 });
  expect(await later).toMatch(/second n=2$/);
  expect(await sink.until(/second n=\d/g)).toMatch(/second n=2$/); // a /g pattern's state does not carry over
  expect(sink.lines).toHaveLength(3);
});

test("until ends at once with the signal's reason, and its timeout names the pattern and the last lines", async () => {
  const sink = memorySink("info");
  new Logger(sink).info("only line");
  const stop = new AbortController();
  const waiting = sink.until("never", { signal: stop.signal, timeout: 60_000 }).catch((e: Error) => e);
  stop.abort(new Error("the operator failed"));
  expect(((await waiting) as Error).message).toBe("the operator failed");
  const error = await sink.until("never", { timeout: 50 }).catch((e: Error) => e);
  expect((error as Error).message).toMatch(/^logs.until\(never\): no such line within 50 ms; 1 lines, the last: \n  .*only line$/);
});

test("a tee writes each line to each sink from that sink's own level", () => {
  const everything = memorySink("debug");
  const warnings = memorySink("warn");
  const logger = new Logger(teeSink(everything, warnings));
  expect(logger.enabled("debug")).toBe(true);
  logger.debug("detail");
  logger.warn("careful");
  const messages = (lines: string[]) => lines.map((line) => line.split(/ +/).slice(1).join(" "));
  expect(messages(everything.lines)).toEqual(["DEBUG detail", "WARN careful"]);
  expect(messages(warnings.lines)).toEqual(["WARN careful"]);
});
