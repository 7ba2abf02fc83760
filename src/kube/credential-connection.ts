// The Connection that kubeconfig users and the in-cluster service account become: its
// Authorization header comes from a loader (a static token, a token file, a credential plugin)
// and is cached until it may have changed; concurrent callers share one load. Apart from
// connection.ts, which decides from a kubeconfig or a pod what to load and over which TLS.
// Nothing here logs or prints a token, key or password; `describe()` is safe to log.

import { KubeconfigError } from "./kubeconfig.ts";
import type { AuthKind, Connection, ConnectionTLS } from "./connection-shape.ts";

/** Re-read token files at most this often (bound service-account tokens rotate). */
export const TOKEN_FILE_RECHECK_MS = 60_000;

export type Loaded = { headers: Record<string, string>; validUntil: number; cert?: string; key?: string };

export class CredentialConnection implements Connection {
  tls: ConnectionTLS | undefined;
  /** The kubeconfig cluster's proxy-url, if any. */
  proxy: string | undefined;
  private headers: Record<string, string> = {};
  private validUntil = -Infinity;
  private loading?: Promise<void>;

  constructor(
    readonly server: string,
    tls: ConnectionTLS | undefined,
    readonly user: string,
    readonly authKind: AuthKind,
    private readonly contextName: string | undefined,
    readonly namespace: string | undefined,
    /** Fetches the credentials; `fresh` after a 401. */
    private readonly load: (fresh: boolean) => Promise<Loaded>,
  ) {
    this.tls = tls;
  }

  currentHeaders(): Record<string, string> | undefined {
    return Date.now() < this.validUntil ? this.headers : undefined;
  }

  authHeaders(): Promise<Record<string, string>> {
    if (Date.now() < this.validUntil) return Promise.resolve(this.headers);
    return this.refresh(false).then(() => this.headers);
  }

  async reauthenticate(): Promise<void> {
    await this.refresh(true);
  }

  private refresh(fresh: boolean): Promise<void> {
    // Concurrent callers share one refresh: one exec of a plugin, one read of a file.
    if (this.loading) return this.loading;
    this.loading = this.load(fresh)
      .then((loaded) => {
        if (!sameHeaders(this.headers, loaded.headers)) this.headers = loaded.headers;
        this.validUntil = loaded.validUntil;
        if (loaded.cert && loaded.key && this.tls && (loaded.cert !== this.tls.cert || loaded.key !== this.tls.key)) {
          this.tls = { ...this.tls, cert: loaded.cert, key: loaded.key };
        }
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  describe(): string {
    let text = `server=${this.server}`;
    if (this.contextName) text += ` context=${this.contextName}`;
    return `${text} user=${this.user || "(none)"} auth=${this.authKind}`;
  }
}

function sameHeaders(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a[k] === b[k]);
}

export async function readToken(file: string, what: string): Promise<string> {
  try {
    return (await Bun.file(file).text()).trim();
  } catch (error) {
    throw new KubeconfigError(`cannot read ${what} ${file}: ${(error as Error).message}`);
  }
}
