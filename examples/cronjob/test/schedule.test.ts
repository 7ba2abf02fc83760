// The 5-field cron schedules of handlers/schedule.ts: the next run after a time, in UTC.

import { expect, test } from "bun:test";
import { parseSchedule } from "../handlers/schedule.ts";

const next = (schedule: string, after: string) => parseSchedule(schedule).next(new Date(after)).toISOString();

test("steps, fixed minutes and hours, ranges and lists", () => {
  expect(next("*/5 * * * *", "2030-01-01T00:03:10Z")).toBe("2030-01-01T00:05:00.000Z");
  expect(next("*/5 * * * *", "2030-01-01T00:05:00Z")).toBe("2030-01-01T00:10:00.000Z"); // strictly after
  expect(next("1 * * * *", "2030-01-01T00:01:30Z")).toBe("2030-01-01T01:01:00.000Z");
  expect(next("30 2 * * *", "2030-01-01T03:00:00Z")).toBe("2030-01-02T02:30:00.000Z");
  expect(next("0,30 9-17/4 * * *", "2030-01-01T09:45:00Z")).toBe("2030-01-01T13:00:00.000Z");
  expect(next("0 0 1 * *", "2030-12-15T00:00:00Z")).toBe("2031-01-01T00:00:00.000Z");
});

test("days: day of week 0-7 from Sunday; both day fields restricted match either", () => {
  expect(next("0 9 * * 1-5", "2030-01-04T10:00:00Z")).toBe("2030-01-07T09:00:00.000Z"); // Friday → Monday
  expect(next("0 0 * * 7", "2030-01-01T00:00:00Z")).toBe("2030-01-06T00:00:00.000Z"); // Sunday
  expect(next("0 0 13 * 5", "2030-01-01T00:00:00Z")).toBe("2030-01-04T00:00:00.000Z"); // a Friday before the 13th
  expect(next("0 0 29 2 *", "2030-01-01T00:00:00Z")).toBe("2032-02-29T00:00:00.000Z");
});

test("a schedule it cannot read, or one that never fires, is an error", () => {
  expect(() => parseSchedule("* * * *")).toThrow("expected 5 fields");
  expect(() => parseSchedule("61 * * * *")).toThrow("outside 0-59");
  expect(() => parseSchedule("@hourly")).toThrow();
  expect(() => parseSchedule("0 0 30 2 *").next(new Date())).toThrow("never fires");
});
