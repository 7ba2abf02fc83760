// The renewal state machine of on.login's credentials (kube/renewal.ts), without a network:
// backoff 1 s doubling to 30 s, a failure remembered until its next attempt, renewed credentials
// proven by a success or counted as a failure when refused, and the failing-since of /healthz.

import { expect, test } from "bun:test";
import { IDLE, accepted, failingSince, mayRenew, refusedMeanwhile, renewalFailed, renewalReturned, renewalStarted, retryDelay, type RenewalState } from "../../src/kube/renewal.ts";

const sealed = new Error("vault is sealed");

test("the backoff of failed renewals is 1 s doubling to 30 s", () => {
  expect([0, 1, 2, 3, 4, 5, 6, 40].map((failures) => retryDelay(failures))).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
});

test("a failed renewal is remembered: no renewal before its next attempt, one after; the run of failures keeps its start", () => {
  let state: RenewalState = renewalStarted(IDLE, true);
  state = renewalFailed(state, sealed, 10_000);
  expect(state).toEqual({ kind: "failed", until: 11_000, failures: 1, failingSince: 10_000, error: sealed, refused: true });
  expect(mayRenew(state, 10_999)).toBe(false);
  expect(mayRenew(state, 11_000)).toBe(true);
  state = renewalFailed(renewalStarted(state, true), sealed, 11_000);
  expect(state).toMatchObject({ until: 13_000, failures: 2, failingSince: 10_000 });
  expect(failingSince(state)).toBe(10_000);
});

test("renewed credentials are proven by a success (idle, no longer failing) or, refused, count as one more failure", () => {
  const failedOnce = renewalFailed(renewalStarted(IDLE, true), sealed, 0);
  const unproven = renewalReturned(renewalStarted(failedOnce, true));
  expect(unproven).toEqual({ kind: "unproven", failures: 1, failingSince: 0 });
  expect(failingSince(unproven)).toBe(0);
  expect(accepted(unproven)).toBe(IDLE);
  expect(failingSince(accepted(unproven))).toBeUndefined();
  expect(renewalFailed(unproven, new Error("refused too"), 5000)).toMatchObject({ kind: "failed", until: 7000, failures: 2, failingSince: 0, refused: true });
});

test("a renewal for expiresAt alone does not mark the credentials refused, until a 401 says so", () => {
  const expired = renewalFailed(renewalStarted(IDLE, false), sealed, 0);
  expect(expired).toMatchObject({ kind: "failed", refused: false });
  expect(refusedMeanwhile(expired)).toMatchObject({ kind: "failed", refused: true });
  expect(refusedMeanwhile(IDLE)).toBe(IDLE);
});
