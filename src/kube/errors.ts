// ApiError carries the HTTP status and the Kubernetes Status object of a failed call,
// so that callers branch on `code`/`reason` and logs show what the server actually said.

import type { Status } from "./types.ts";

export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    /** HTTP status code (or the Status `code` for watch ERROR events). */
    readonly code: number,
    /** The Status the server sent; synthesised from the body when it sent none. */
    readonly status: Status,
    readonly method: string,
    readonly path: string,
    /** Seconds from a Retry-After header or Status details, when given. */
    readonly retryAfter?: number,
  ) {
    super(`${method} ${path}: ${code} ${status.reason ?? ""}: ${status.message ?? "(no message)"}`.replace(":  :", ":"));
  }

  get reason(): string | undefined {
    return this.status.reason;
  }

  /** Worth retrying as it is: throttling, server trouble, timeouts. */
  get transient(): boolean {
    return this.code === 429 || this.code >= 500 || this.code === 408;
  }
}

/** The request never got an HTTP answer: refused, reset, DNS, TLS handshake. */
export class ConnectionError extends Error {
  override readonly name = "ConnectionError";
  constructor(
    message: string,
    readonly method: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(`${method} ${path}: ${message}`, options);
  }
}

export function isStatus(value: unknown): value is Status {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "Status";
}

export function isForbidden(error: unknown): boolean {
  return error instanceof ApiError && error.code === 403;
}

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.code === 404;
}

export function isConflict(error: unknown): boolean {
  return error instanceof ApiError && error.code === 409;
}

export function isGone(error: unknown): boolean {
  return error instanceof ApiError && error.code === 410;
}
