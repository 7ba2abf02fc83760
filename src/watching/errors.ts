// WatchError (the one error a watcher throws) and the sorting of failures into what the
// watcher does about them. Kept apart from the I/O so the policy reads in one place:
//   410             → relist from scratch (never an error to the consumer)
//   403             → WatchError naming resource, namespace and the missing verb
//   429, 5xx, 408, network failures, broken streams → reconnect with backoff (Retry-After honoured)
//   other 4xx       → WatchError (or, for a streaming-list attempt, "not supported here")
//   a line past the limit → WatchError (the stream's owner reports it and starts afresh)

import { ApiError, ConnectionError } from "../kube/index.ts";
import { resourceName, type Resource, type Status } from "../kube/index.ts";
import { isAbortError } from "../util/index.ts";
import type { LineTooLongError } from "./lines.ts";
import { describe } from "./state.ts";

export class WatchError extends Error {
  override readonly name = "WatchError";
  /** The Status the server sent (from an ERROR event or a failed request). */
  readonly status?: Status;
  /** The HTTP status code or the Status `code`. */
  readonly code?: number;

  constructor(message: string, options: { status?: Status; code?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.status = options.status;
    this.code = options.code ?? options.status?.code;
  }
}

export type Failure =
  | { kind: "aborted" }
  | { kind: "gone" }
  | { kind: "forbidden"; error: ApiError }
  /** Worth retrying after a delay; `retryAfterMs` is the server's own wish. */
  | { kind: "retry"; retryAfterMs?: number; why: string }
  | { kind: "rejected"; error: ApiError };

export function classify(error: unknown): Failure {
  if (error instanceof ApiError) {
    if (error.code === 410) return { kind: "gone" };
    if (error.code === 403) return { kind: "forbidden", error };
    if (error.transient) {
      const retryAfterMs = error.retryAfter !== undefined ? error.retryAfter * 1000 : undefined;
      return { kind: "retry", retryAfterMs, why: `${error.code} ${error.reason ?? ""}`.trim() };
    }
    return { kind: "rejected", error };
  }
  if (isAbortError(error)) return { kind: "aborted" };
  if (error instanceof ConnectionError) return { kind: "retry", why: error.message };
  // A body read that broke mid-stream (reset, truncated chunk) surfaces as a plain error.
  return { kind: "retry", why: error instanceof Error ? error.message : String(error) };
}

function where(namespace: string | null | undefined): string {
  return namespace ? `in namespace "${namespace}"` : "cluster-wide";
}

export function forbidden(
  resource: Resource, namespace: string | null | undefined, verb: "list" | "watch", error: ApiError,
): WatchError {
  const name = resourceName(resource);
  return new WatchError(
    `forbidden: cannot ${verb} ${name} ${where(namespace)}; grant the "${verb}" verb on "${name}" ` +
      `${namespace ? `in a Role in "${namespace}"` : "in a ClusterRole"} to this operator's service account ` +
      `(${error.status.message ?? "no message"})`,
    { status: error.status, code: 403, cause: error },
  );
}

export function rejected(
  resource: Resource, namespace: string | null | undefined, verb: "list" | "watch", error: ApiError,
): WatchError {
  return new WatchError(`cannot ${verb} ${resourceName(resource)} ${where(namespace)}: ${describe(error.status)}`, {
    status: error.status,
    code: error.code,
    cause: error,
  });
}

export function errorEvent(resource: Resource, namespace: string | null | undefined, status: Status): WatchError {
  const message = `watch of ${resourceName(resource)} ${where(namespace)} failed with ERROR ${describe(status)}`;
  return new WatchError(message, { status });
}

/** A line outgrew the limit: the stream is broken, not the resource; its owner restarts it. */
export function lineTooLong(
  resource: Resource, namespace: string | null | undefined, error: LineTooLongError,
): WatchError {
  return new WatchError(
    `watch of ${resourceName(resource)} ${where(namespace)}: ${error.message}; dropped the stream ` +
      `(raise watching.lineLimit if objects really are this large)`,
    { cause: error },
  );
}

/**
 * What may be logged about a bad watch line: its length and, when its start names one, the
 * event type. Never an excerpt: the line may carry a Secret's data.
 */
export function lineFacts(line: string): { length: number; type?: string } {
  const type = /^\s*\{\s*"type"\s*:\s*"([A-Za-z]{1,32})"/.exec(line.slice(0, 64))?.[1];
  return type ? { length: line.length, type } : { length: line.length };
}
