// Durations in kobun.yaml: unit strings and plain seconds in, seconds out; garbage and
// negatives rejected with the key path in the message.

import { describe, expect, test } from "bun:test";
import { ConfigError, formatDuration, parseDuration } from "../../src/config/index.ts";

describe("parseDuration", () => {
  test.each([
    ["30s", 30],
    ["5m", 300],
    ["1h", 3600],
    ["250ms", 0.25],
    ["1m30s", 90],
    ["1h0m5s", 3605],
    ["1.5s", 1.5],
    [45, 45],
    [0.1, 0.1],
    ["12", 12],
    [0, 0],
  ] as const)("%p is %p seconds", (input, seconds) => {
    expect(parseDuration(input, "x")).toBe(seconds);
  });

  test.each([["soon"], ["-5s"], [-1], ["5 m"], ["5d"], [""], [null], [true], [Number.POSITIVE_INFINITY], ["s"]])(
    "rejects %p with the key path and the accepted forms",
    (input) => {
      let caught: unknown;
      try {
        parseDuration(input, "watching.serverTimeout");
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      expect((caught as ConfigError).path).toBe("watching.serverTimeout");
      expect((caught as ConfigError).message).toStartWith(
        'watching.serverTimeout: expected a duration like "30s", "5m", "1h30m", "250ms" or a number of seconds, got ',
      );
    },
  );

  test("says exactly what it got", () => {
    expect(() => parseDuration("soon", "handling.backoff")).toThrow(
      'handling.backoff: expected a duration like "30s", "5m", "1h30m", "250ms" or a number of seconds, got "soon"',
    );
  });
});

describe("formatDuration", () => {
  test.each([[90, "1m30s"], [0.8, "800ms"], [3600, "1h"], [0, "0s"], [15, "15s"]] as const)("%p → %p and back", (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
    expect(parseDuration(text, "x")).toBe(seconds);
  });
});
