// ApiError carries the HTTP status and the Kubernetes Status object of a failed call,
// so that callers branch on `code`/`reason` and logs show what the server actually said.

import type { Status } from "./types.ts";

/** A request the API server refused: its HTTP `code` and the `status` (metav1.Status) it sent. */
export class ApiError extends Error {
  override readonly name: string = "ApiError";
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
    const message = `${method} ${path}: ${code} ${status.reason ?? ""}: ${status.message ?? "(no message)"}`;
    super(message.replace(":  :", ":"));
  }

  get reason(): string | undefined {
    return this.status.reason;
  }

  /** Worth retrying as it is: throttling, server trouble, timeouts. */
  get transient(): boolean {
    return this.code === 429 || this.code >= 500 || this.code === 408;
  }
}

/**
 * A server-side apply refused with 409 because other field managers own some of the fields:
 * `conflicts` names each field path and its manager, as the server's Status causes do.
 * Apply with `force: true` to take those fields over.
 */
export class ApplyConflictError extends ApiError {
  readonly conflicts: { field: string; manager?: string; message: string }[];
  override readonly name = "ApplyConflictError";
  constructor(error: ApiError) {
    super(error.code, error.status, error.method, error.path, error.retryAfter);
    const causes = (error.status.details?.causes ?? []) as { field?: string; message?: string }[];
    this.conflicts = causes.map((c) => ({
      field: c.field ?? "",
      manager: /conflict with "([^"]+)"/.exec(c.message ?? "")?.[1],
      message: c.message ?? "",
    }));
    const fields = this.conflicts.map((c) => (c.manager ? `${c.field} (owned by ${c.manager})` : c.field)).join(", ");
    this.message = `${error.method} ${error.path}: apply conflicts on ${fields || "fields the server did not name"}; ` +
      "change the other manager, drop these fields from the applied object, " +
      "or apply with { force: true } to take them over";
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
