// After a 401: a request re-reads the credentials once (a kubeconfig's token file or exec plugin
// again, a login renewed) and is sent again only when they changed; otherwise its error says who
// was refused, and why re-reading failed.

import type { Logger } from "../util/index.ts";
import type { Connection } from "./connection.ts";
import type { ApiError } from "./errors.ts";
import { RenewalError } from "./login.ts";

/** True when other credentials came; the failure when re-reading them failed (the request's error says it). */
export async function rereadCredentials(
  connection: Connection, logger: Logger, before: Record<string, string>,
): Promise<boolean | Error> {
  const tlsBefore = connection.tls;
  const { server, user } = connection;
  logger.info("re-reading credentials after 401", { server, user, auth: connection.authKind });
  try {
    await connection.reauthenticate(before);
  } catch (error) {
    // A login connection logs its failed renewals once each (not once per refused request).
    if (!(error instanceof RenewalError)) logger.warn("re-reading credentials failed", { server, user, error });
    return error instanceof Error ? error : new Error(String(error));
  }
  return (await connection.authHeaders()) !== before || connection.tls !== tlsBefore;
}

/** The refused request's error, naming the server, the user and the auth kind. */
export function authenticationFailed(connection: Connection, error: ApiError, renewal: boolean | Error): ApiError {
  const renewing = renewal instanceof Error ? `; re-reading the credentials failed: ${renewal.message}` : "";
  const who = `${connection.server} as ${connection.user || "(no user)"} (${connection.authKind})`;
  error.message = `authentication failed against ${who}: ${error.message}${renewing}`;
  return error;
}
