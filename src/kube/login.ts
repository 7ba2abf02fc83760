// Credentials from the operator's own code (on.login) instead of a kubeconfig: a function
// returning the server, its CA and a token or client certificate, or a kubeconfig (a path,
// its text, or a @kubernetes/client-node KubeConfig object). It is asked once before anything
// connects, again when its `expiresAt` has passed, and again when the API server answers 401
// (a rotated token): concurrent 401s share one renewal, and a request refused with credentials
// that were renewed since just retries with the new ones.
// Nothing here logs or prints what a login returned; `describe()` is safe to log.

import { type AuthKind, type Connection, type ConnectionTLS, connect, fromKubeconfig } from "./connection.ts";
import type { ResolvedKubeconfig } from "./kubeconfig.ts";
import { silentLogger, type Logger } from "../util/index.ts";
import {
  IDLE, RENEWAL_BACKOFF, accepted, failingSince, mayRenew, refusedMeanwhile, renewalFailed, renewalReturned,
  renewalStarted, type RenewalBackoff, type RenewalFailure, type RenewalState,
} from "./renewal.ts";

/** What an `on.login` handler returns instead of a kubeconfig; nothing of it is ever logged. */
export interface LoginCredentials {
  /** The API server's URL (https://host:port, or http:// for a local test server). */
  server: string;
  /** PEM of the CA that signed the server's certificate (default: the system's CAs). */
  ca?: string;
  /** Do not verify the server's certificate (a test server only). */
  insecure?: boolean;
  /** The name the server's certificate carries, when it differs from the URL's host. */
  tlsServerName?: string;
  /** A bearer token (a ServiceAccount token, an OIDC id token, ...). */
  token?: string;
  /** PEM client certificate and its key (both or neither). */
  clientCertificate?: string;
  /** PEM private key of `clientCertificate`. */
  clientKey?: string;
  /** The default namespace of these credentials. */
  namespace?: string;
  /**
   * When they stop being valid: the login is asked again by the first request after it (not waiting for a 401;
   * an idle operator is not asked at that moment). One already past is ignored: renewal then waits for a 401.
   */
  expiresAt?: Date | string | number;
}

/** What a login returns: credentials, or a kubeconfig (path, text, or a client-node KubeConfig). */
export type LoginResult =
  | LoginCredentials
  | { kubeconfig: string; context?: string }
  | { kubeconfigText: string; context?: string }
  | { exportConfig(): string };

/** Asks for credentials: `renewal` is false the first time, true when they expired or were refused. */
export type Login = (renewal: boolean) => Promise<LoginResult>;

export class LoginError extends Error {
  override readonly name = "LoginError";
}

/** A renewal failed (its message is the login's error): the connection has logged it once, with its next attempt. */
export class RenewalError extends LoginError {}

interface Logged {
  connection: Connection;
  /** ms epoch; Infinity when the login said nothing. */
  expiresAt: number;
}

// An expiresAt already past would ask the login again before every request: it is taken as no
// hint (renewal after a 401 only), with one warning. A near one is honoured: short-lived tokens are
// real (the e2e's TokenRequest lives 1.5 s).

/** A Connection whose credentials come from `login` (asked now, then whenever they must be renewed). */
export async function loginConnection(
  login: Login, logger: Logger = silentLogger, backoff: RenewalBackoff = RENEWAL_BACKOFF,
): Promise<Connection> {
  const expiry = new ExpiryCheck(logger);
  return new LoginConnection(expiry.checked(await loggedIn(await login(false))), login, expiry, logger, backoff);
}

class ExpiryCheck {
  private warned = false;

  constructor(private readonly logger: Logger) {}

  checked(logged: Logged): Logged {
    if (logged.expiresAt > Date.now()) return logged;
    if (!this.warned) {
      this.warned = true;
      this.logger.warn(
        "on.login returned an expiresAt already past: ignored, the credentials are renewed after a 401 instead",
        { expiresAt: new Date(logged.expiresAt).toISOString() },
      );
    }
    return { ...logged, expiresAt: Infinity };
  }
}

class LoginConnection implements Connection {
  readonly server: string;
  readonly authKind: AuthKind = "login";
  private renewing: Promise<void> | undefined;
  private renewal: RenewalState = IDLE;
  private readonly listeners = new Set<(failing: RenewalFailure | undefined) => void>();

  constructor(
    private current: Logged, private readonly login: Login, private readonly expiry: ExpiryCheck,
    private readonly logger: Logger, private readonly backoff: RenewalBackoff,
  ) {
    this.server = current.connection.server;
  }

  get tls(): ConnectionTLS | undefined {
    return this.current.connection.tls;
  }

  get proxy(): string | undefined {
    return this.current.connection.proxy;
  }

  get namespace(): string | undefined {
    return this.current.connection.namespace;
  }

  get user(): string {
    return this.current.connection.user;
  }

  currentHeaders(): Record<string, string> | undefined {
    const settled = this.renewal.kind === "idle" || this.renewal.kind === "unproven";
    return settled && Date.now() < this.current.expiresAt ? this.current.connection.currentHeaders?.() : undefined;
  }

  async authHeaders(): Promise<Record<string, string>> {
    // Refused credentials are not sent again: the request waits for their renewal under way, or
    // fails at once while a failed one backs off (and starts the next attempt once it is due).
    const state = this.renewal;
    if ((state.kind === "renewing" || state.kind === "failed") && state.refused) await this.renew(true, "unsent");
    // expiresAt is a hint: when its renewal fails (logged, backed off), the server judges the credentials we have.
    else if (Date.now() >= this.current.expiresAt) await this.renew(false).catch(() => undefined);
    return this.current.connection.authHeaders();
  }

  async reauthenticate(used?: Record<string, string>): Promise<void> {
    // Refused with credentials renewed since (another request's 401 came first): nothing to do.
    if (used && !this.renewing && (await this.current.connection.authHeaders()) !== used) return;
    if (this.renewal.kind === "unproven" && !this.renewing) {
      this.failed(new LoginError("the API server refused the credentials on.login renewed, too (401)"));
    } else this.moved(refusedMeanwhile(this.renewal));
    await this.renew(true);
  }

  accepted(headers: Record<string, string>): void {
    if (this.renewal.kind !== "unproven" || headers !== this.current.connection.currentHeaders?.()) return;
    this.moved(accepted(this.renewal));
  }

  watchRenewal(listener: (failing: RenewalFailure | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  describe(): string {
    return `${this.current.connection.describe()} via on.login`;
  }

  /** `refused`: asked after a 401 (not for expiresAt); `unsent`: for a request not sent yet (its error says so). */
  private renew(refused: boolean, unsent?: "unsent"): Promise<void> {
    // One login at a time, shared by every caller that asks meanwhile.
    if (this.renewing) return this.renewing;
    if (!mayRenew(this.renewal, Date.now())) return Promise.reject(this.backingOff(unsent));
    this.moved(renewalStarted(this.renewal, refused));
    this.renewing = (async () => {
      const next = this.expiry.checked(await loggedIn(await this.login(true)));
      if (next.connection.server !== this.server) {
        throw new LoginError(
          `on.login returned server ${next.connection.server}, but the operator is connected to ${this.server}: ` +
            "a login may renew credentials, not move to another server (restart the operator for that)",
        );
      }
      this.current = next;
      this.moved(renewalReturned(this.renewal));
    })().catch((error) => {
      throw this.failed(error instanceof Error ? error : new Error(String(error)));
    }).finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  /** A failed renewal: one ERROR line per attempt (not per refused request); the error the waiting requests get. */
  private failed(error: Error): RenewalError {
    const state = renewalFailed(this.renewal, error, Date.now(), this.backoff);
    this.moved(state);
    const { failures, until } = state as Extract<RenewalState, { kind: "failed" }>;
    this.logger.error(
      "on.login could not renew the credentials: requests refused until the next attempt fail at once",
      { failures, retryInMs: until - Date.now(), error },
    );
    return new RenewalError(error.message, { cause: error });
  }

  /** The error of a request refused (or not sent) before the next attempt: the last one's, and when the next comes. */
  private backingOff(unsent: "unsent" | undefined): RenewalError {
    const state = this.renewal as Extract<RenewalState, { kind: "failed" }>;
    const next = `on.login failed ${state.failures} time(s) in a row, ` +
      `next attempt after ${new Date(state.until).toISOString()}`;
    const notSent = unsent ? "; not sent with the refused credentials" : "";
    return new RenewalError(`${state.error.message} (${next}${notSent})`, { cause: state.error });
  }

  /** The next state; the listeners hear of each failed attempt, and of the end of the failures. */
  private moved(state: RenewalState): void {
    const wasFailing = failingSince(this.renewal) !== undefined;
    this.renewal = state;
    if (state.kind === "failed") this.tell({ since: state.failingSince, failures: state.failures, error: state.error });
    else if (wasFailing && failingSince(state) === undefined) this.tell(undefined);
  }

  private tell(failure: RenewalFailure | undefined): void {
    for (const listener of this.listeners) listener(failure);
  }
}

/**
 * A connection from one login's result; a result that is none of the accepted shapes is a LoginError saying what
 * is wrong.
 */
async function loggedIn(result: LoginResult): Promise<Logged> {
  if (!result || typeof result !== "object") {
    throw new LoginError(
      `on.login returned ${result === null ? "null" : typeof result}: ` +
        "return { server, token } or { server, clientCertificate, clientKey }, or a kubeconfig",
    );
  }
  const unexpiring = async (connecting: Promise<Connection>): Promise<Logged> => ({
    connection: await connecting, expiresAt: Infinity,
  });
  if ("exportConfig" in result && typeof result.exportConfig === "function") {
    return unexpiring(connect({ kubeconfigText: result.exportConfig() }));
  }
  if ("kubeconfigText" in result) {
    return unexpiring(connect({ kubeconfigText: result.kubeconfigText, ...contextOf(result) }));
  }
  if ("kubeconfig" in result) return unexpiring(connect({ kubeconfig: result.kubeconfig, ...contextOf(result) }));
  const credentials = result as LoginCredentials;
  return { connection: await fromKubeconfig(asKubeconfig(credentials)), expiresAt: expiryOf(credentials.expiresAt) };
}

function contextOf(result: { context?: string }): { context?: string } {
  return result.context ? { context: result.context } : {};
}

/** The credentials as a one-context kubeconfig, so they get exactly a kubeconfig's TLS and auth. */
function asKubeconfig(c: LoginCredentials): ResolvedKubeconfig {
  if (typeof c.server !== "string" || !/^https?:\/\/[^/]/.test(c.server)) {
    const got = c.server === undefined ? "no server" : "a server that is not an http(s) URL";
    throw new LoginError(`on.login returned ${got}: return { server: "https://host:port", ... }`);
  }
  for (const field of ["ca", "token", "clientCertificate", "clientKey", "namespace", "tlsServerName"] as const) {
    if (c[field] === undefined || typeof c[field] === "string") continue;
    throw new LoginError(`on.login returned a ${field} that is not a string`);
  }
  if (!c.clientCertificate !== !c.clientKey) {
    throw new LoginError(
      "on.login returned a clientCertificate without its clientKey, or a key without its certificate: return both",
    );
  }
  const b64 = (pem: string | undefined) => (pem ? Buffer.from(pem).toString("base64") : undefined);
  const name = "on.login";
  return {
    source: "(on.login)",
    context: { name, cluster: name, user: name, ...(c.namespace ? { namespace: c.namespace } : {}) },
    cluster: {
      name, server: c.server, skipTLSVerify: c.insecure === true,
      ...(c.ca && c.insecure !== true ? { caData: b64(c.ca) } : {}),
      ...(c.tlsServerName ? { tlsServerName: c.tlsServerName } : {}),
    },
    user: {
      name, ...(c.token ? { token: c.token } : {}),
      ...(c.clientCertificate ? { certData: b64(c.clientCertificate), keyData: b64(c.clientKey) } : {}),
    },
  };
}

function expiryOf(expiresAt: LoginCredentials["expiresAt"]): number {
  if (expiresAt === undefined) return Infinity;
  const at =
    expiresAt instanceof Date ? expiresAt.getTime()
    : typeof expiresAt === "number" ? expiresAt
    : Date.parse(expiresAt);
  if (Number.isFinite(at)) return at;
  throw new LoginError(
    "on.login returned an expiresAt that is not a date (a Date, an ISO 8601 string, or ms since the epoch)",
  );
}
