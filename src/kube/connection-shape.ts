// What a connection is to the rest of kube/: a server, TLS options and credentials that can be
// asked for, refreshed after a 401 and described safely. connection.ts makes one from a
// kubeconfig or the service account; credential-connection.ts and login.ts are its kinds.

import type { RenewalFailure } from "./renewal.ts";

/** TLS options in the shape Bun's fetch takes them. */
export interface ConnectionTLS {
  ca?: string;
  cert?: string;
  key?: string;
  serverName?: string;
  rejectUnauthorized: boolean;
}

export type AuthKind =
  | "none" | "token" | "token-file" | "basic" | "client-certificate" | "exec" | "auth-provider" | "service-account"
  | "login";

export interface Connection {
  /** The server URL without a trailing slash. */
  readonly server: string;
  /**
   * TLS options for fetch; undefined for plain http. May be replaced when an exec plugin hands out a client
   * certificate.
   */
  readonly tls: ConnectionTLS | undefined;
  /** An http(s) proxy the requests are tunnelled through (a kubeconfig's proxy-url); else the proxy variables'. */
  readonly proxy?: string;
  /** The default namespace of the context or the service account, if any. */
  readonly namespace?: string;
  /** The user name as the kubeconfig calls it (or "serviceaccount"). */
  readonly user: string;
  readonly authKind: AuthKind;
  /** Headers carrying the credentials. The same object is returned while the credentials stay the same. */
  authHeaders(): Promise<Record<string, string>>;
  /** The same headers, when they are current (nothing to load or re-check); else undefined. */
  currentHeaders?(): Record<string, string> | undefined;
  /**
   * Drops cached credentials and fetches them again (after a 401). `used`: the headers the
   * refused request carried; a connection may skip the fetch when they are no longer current.
   */
  reauthenticate(used?: Record<string, string>): Promise<void>;
  /** A request succeeded with these headers (a login connection's renewed credentials are proven then). */
  accepted?(headers: Record<string, string>): void;
  /**
   * Login connections: `listener` hears of each failed renewal, and undefined once renewals work again; returns the
   * unsubscribe.
   */
  watchRenewal?(listener: (failure: RenewalFailure | undefined) => void): () => void;
  /** Server, context, user and auth kind: safe to log. */
  describe(): string;
}
