// Turning what fetch gives back into kobun's errors: a non-2xx response into an ApiError
// with the server's Status (or one synthesised from the body), a thrown fetch error into a
// ConnectionError, and both into "may this be retried, and when".

import { ApiError, ConnectionError, isStatus } from "./errors.ts";
import type { Status } from "./types.ts";
import { withoutCredentials } from "../util/index.ts";

const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Expired",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/** Reads a failed response's body and builds the ApiError for it. */
export async function apiErrorFrom(response: Response, method: string, path: string): Promise<ApiError> {
  let text = "";
  try {
    text = await response.text();
  } catch {
    // The body broke off: the status line is still worth reporting.
  }
  let status: Status | undefined;
  if (text.startsWith("{")) {
    try {
      const parsed = JSON.parse(text);
      if (isStatus(parsed)) status = parsed;
    } catch {
      // Not JSON after all.
    }
  }
  const code = response.status;
  status ??= {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    code,
    reason: REASONS[code] ?? (code >= 500 ? "InternalError" : "Unknown"),
    // Not the API server's own words: a proxy's page may echo our request (its Authorization,
    // a Secret we sent), so credential-shaped runs are cut before it reaches any log.
    message: withoutCredentials(text.trim()).slice(0, 500) || response.statusText || `HTTP ${code}`,
  };
  let retryAfter = parseRetryAfter(response.headers.get("retry-after"));
  const retryAfterSeconds = status.details?.retryAfterSeconds;
  if (retryAfter === undefined && typeof retryAfterSeconds === "number") retryAfter = retryAfterSeconds;
  return new ApiError(code, status, method, path, retryAfter);
}

function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

export interface NetworkFailure {
  error: ConnectionError;
  /** Worth another attempt at all (not a certificate problem). */
  transient: boolean;
  /** Certainly failed before the request reached the server: safe to retry even a write. */
  unsent: boolean;
}

const UNSENT = new RegExp(
  "refused|FailedToOpenSocket|ENOTFOUND|EAI_AGAIN|DNS|ConnectionRefused|EHOSTUNREACH|ENETUNREACH|UnableToConnect", "i",
);
const CERTIFICATE = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ALTNAME|HANDSHAKE/i;

export function networkFailure(cause: unknown, method: string, path: string, server: string): NetworkFailure {
  const code = String((cause as { code?: unknown })?.code ?? "");
  const message = cause instanceof Error ? cause.message : String(cause);
  const both = `${code} ${message}`;
  if (CERTIFICATE.test(both)) {
    return {
      error: new ConnectionError(
        `TLS failure talking to ${server} (${code || message}): ` +
          "check the cluster's certificate-authority, tls-server-name and the client certificate",
        method,
        path,
        { cause },
      ),
      transient: false,
      unsent: true,
    };
  }
  const unsent = UNSENT.test(both);
  // Bun's message may start with the code already ("ECONNREFUSED: Unable to connect..."): said once.
  const coded = code && !message.startsWith(code) ? `${code}: ${message}` : message;
  return {
    error: new ConnectionError(`cannot reach ${server}: ${coded}`, method, path, { cause }),
    transient: true,
    unsent,
  };
}
