// Lease timings are validated as client-go validates its leader election: a holder that cannot
// renew freezes at renewDeadline and must have stopped its handlers (freezeGracePeriod later)
// before the lease can expire, or a standby runs the same handlers on the same objects meanwhile.

import { expect, test } from "bun:test";
import { ConfigError, resolveSettings } from "../../src/config/index.ts";

function problems(fileData: unknown): string[] {
  try {
    resolveSettings({ file: "kobun.yaml", fileData });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message.split("\n");
  }
  return [];
}

test("in lease mode, renewDeadline + freezeGracePeriod must be less than the lease duration", () => {
  expect(problems({ peering: { mode: "lease", freezeGracePeriod: "5s" } })).toEqual([
    "kobun.yaml: peering.freezeGracePeriod: expected less than peering.lease.duration - peering.lease.renewDeadline (5s) in lease mode, so that handlers stop before the lease can expire; got 5s",
  ]);
  expect(problems({ peering: { mode: "lease", freezeGracePeriod: "4s" } })).toEqual([]);
  expect(problems({ peering: { mode: "lease", freezeGracePeriod: 0.5, lease: { duration: 3, renewDeadline: 2, retryPeriod: 0.5 } } })).toEqual([]);
});

test("the defaults are a valid lease configuration", () => {
  const settings = resolveSettings({ fileData: { peering: { mode: "lease" } } });
  const { lease, freezeGracePeriod } = settings.peering;
  expect(lease.renewDeadline + freezeGracePeriod).toBeLessThan(lease.duration);
});

test("a renewDeadline beyond the duration is reported once, not again as a grace problem", () => {
  expect(problems({ peering: { mode: "lease", lease: { renewDeadline: "20s" } } })).toEqual([
    "kobun.yaml: peering.lease.renewDeadline: expected less than peering.lease.duration (15s), got 20s",
  ]);
});

test("without lease mode the grace is not tied to the unused lease timings", () => {
  expect(problems({ peering: { freezeGracePeriod: "30s" } })).toEqual([]);
});

test("a freezeGracePeriod that is not a duration in range is named", () => {
  expect(problems({ peering: { freezeGracePeriod: "2h" } })).toEqual([
    'kobun.yaml: peering.freezeGracePeriod: expected a duration from 0s to 1h, got "2h"',
  ]);
});
