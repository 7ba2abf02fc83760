// Durations in configuration: "30s", "5m", "1h", "250ms", "1m30s", or a plain number of
// seconds. Everything inside kobun's settings is a number of seconds (fractions allowed);
// formatDuration() goes back the other way for messages and the example file.

import { ConfigError, configIssue, describeValue } from "./errors.ts";

export const DURATION_EXPECTED = 'a duration like "30s", "5m", "1h30m", "250ms" or a number of seconds';

const UNIT_SECONDS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, m: 60, h: 3600 };
const WHOLE_DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
const PLAIN_SECONDS = /^\d+(?:\.\d+)?$/;

/** Seconds for a valid non-negative duration, or undefined for anything else. */
export function durationSeconds(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (PLAIN_SECONDS.test(text)) return Number(text);
  if (!WHOLE_DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(DURATION_PART)) {
    total += Number(amount) * (UNIT_SECONDS[unit ?? "s"] ?? 1);
  }
  // Rounding keeps "1m30.1s" and similar from growing float noise like 90.10000000000001.
  return Math.round(total * 1e6) / 1e6;
}

/** Parses a duration into seconds; negative or unparsable values throw a ConfigError naming `path`. */
export function parseDuration(value: unknown, path: string): number {
  const seconds = durationSeconds(value);
  if (seconds === undefined) {
    const detail = `expected ${DURATION_EXPECTED}, got ${describeValue(value)}`;
    throw new ConfigError([configIssue({ path, expected: DURATION_EXPECTED }, detail)]);
  }
  return seconds;
}

/** Renders seconds as the shortest duration string that parses back to the same value: 90 → "1m30s". */
export function formatDuration(seconds: number): string {
  if (seconds === 0) return "0s";
  let rest = Math.round(seconds * 1000);
  let text = "";
  for (const [unit, size] of [["h", 3_600_000], ["m", 60_000], ["s", 1000], ["ms", 1]] as const) {
    const amount = Math.floor(rest / size);
    if (amount > 0) text += `${amount}${unit}`;
    rest -= amount * size;
  }
  return text === "" ? `${seconds}s` : text;
}
