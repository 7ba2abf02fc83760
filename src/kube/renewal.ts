// When on.login's credentials are renewed: a small state machine, pure (`now` passed in), that
// login.ts moves. A failed renewal is remembered, not forgotten at once: until its next attempt
// the requests refused, and those that would be, fail at once with its error (no login of their
// own), and the attempts back off, 1 s doubling to 30 s. Renewed credentials the server refuses in
// turn count as a failed renewal too, until a request succeeds with them.
//
//   state                     │ input                                   │ next state
//   ──────────────────────────┼─────────────────────────────────────────┼──────────────────────────────────
//   idle                      │ refused (401), or expired               │ renewing(0, refused?)
//   renewing(n)               │ refused                                 │ renewing(n, refused) (joins it)
//   renewing(n)               │ login returned credentials              │ unproven(n)
//   renewing(n, r)            │ login failed                            │ failed(now + delay(n), n + 1, r)
//   unproven(n)               │ a request succeeded with them           │ idle
//   unproven(n)               │ refused with them                       │ failed(now + delay(n), n + 1, refused)
//   failed(t, n, r)           │ refused (401) with them                 │ failed(t, n, refused)
//   failed(t, n, refused)     │ a request before t                      │ failed: it fails at once, unsent
//   failed(t, n, r)           │ a request or a 401 at or after t        │ renewing(n, r)
//
// `refused`: the server refused the credentials we have, so nothing is sent with them while the
// renewal backs off (not even to be refused again). A renewal asked only because expiresAt passed
// keeps sending the old credentials meanwhile: expiresAt is a hint, the server judges.
//
// Kopf makes refused requests wait until a login succeeds; client-go's exec credentials give a
// request its error at once. kobun does as client-go: every caller has its own retry with
// backoff (handlers, watch reconnects) and a deadline (kube.requestTimeout) that a wait of up to
// 30 s would break, and a request held waiting holds its worker or stream slot meanwhile.

import { backoffDelay } from "../util/index.ts";

/** First delay after a failed renewal, and the largest (ms). */
export const RENEWAL_BACKOFF = { initialMs: 1000, maxMs: 30_000 } as const;

export type RenewalBackoff = { readonly initialMs: number; readonly maxMs: number };

/**
 * `failures`: failed renewals in a row; `failingSince`: when the first of them failed (ms epoch); `refused`: see
 * the header.
 */
export type RenewalState =
  | { kind: "idle" }
  | { kind: "renewing"; failures: number; failingSince?: number; refused: boolean }
  | { kind: "unproven"; failures: number; failingSince?: number }
  | { kind: "failed"; until: number; failures: number; failingSince: number; error: Error; refused: boolean };

/** What a login connection tells its listeners after each failed renewal (undefined: renewals work again). */
export interface RenewalFailure {
  /** When the first failure of this run of failures happened (ms epoch). */
  since: number;
  failures: number;
  error: Error;
}

export const IDLE: RenewalState = { kind: "idle" };

/** Whether a renewal may start now (else the caller fails at once with the last one's error). */
export function mayRenew(state: RenewalState, now: number): boolean {
  return state.kind !== "failed" || now >= state.until;
}

/** A renewal starts (`mayRenew`; not while one is under way); `refused`: asked after a 401, not for expiresAt. */
export function renewalStarted(state: RenewalState, refused: boolean): RenewalState {
  if (state.kind === "idle") return { kind: "renewing", failures: 0, refused };
  const failingSince = state.failingSince !== undefined ? { failingSince: state.failingSince } : {};
  const stillRefused = refused || (state.kind !== "unproven" && state.refused);
  return { kind: "renewing", failures: state.failures, ...failingSince, refused: stillRefused };
}

/** The server refused the credentials we have (401) while a renewal is under way or backing off. */
export function refusedMeanwhile(state: RenewalState): RenewalState {
  return state.kind === "renewing" || state.kind === "failed" ? { ...state, refused: true } : state;
}

/** The login returned credentials: they are used, and proven by the first request they get through. */
export function renewalReturned(state: RenewalState): RenewalState {
  if (state.kind !== "renewing") return state;
  const failingSince = state.failingSince !== undefined ? { failingSince: state.failingSince } : {};
  return { kind: "unproven", failures: state.failures, ...failingSince };
}

/** A request succeeded with the current credentials. */
export function accepted(state: RenewalState): RenewalState {
  return state.kind === "unproven" ? IDLE : state;
}

/** The renewal failed (the login threw or returned what is no use), or its credentials were refused (unproven). */
export function renewalFailed(
  state: RenewalState, error: Error, now: number, backoff: RenewalBackoff = RENEWAL_BACKOFF,
): RenewalState {
  const failures = state.kind === "idle" ? 0 : state.failures;
  const failingSince = state.kind === "idle" ? now : (state.failingSince ?? now);
  const refused =
    state.kind === "unproven" || ((state.kind === "renewing" || state.kind === "failed") && state.refused);
  const until = now + retryDelay(failures, backoff);
  return { kind: "failed", until, failures: failures + 1, failingSince, error, refused };
}

/** The wait after `failures` failed renewals in a row (0: the first failure's wait). */
export function retryDelay(failures: number, backoff: RenewalBackoff = RENEWAL_BACKOFF): number {
  return backoffDelay(failures, { initial: backoff.initialMs, max: backoff.maxMs });
}

/** Since when renewals have been failing (ms epoch), or undefined when they are not. */
export function failingSince(state: RenewalState): number | undefined {
  return state.kind === "idle" ? undefined : state.failingSince;
}
