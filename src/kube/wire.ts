// The wire under the transport: one keep-alive fetch session per TLS configuration (a new one
// when the credentials bring another client certificate), spoken in HTTP/2 where the server is
// https and selects it, HTTP/1.1 otherwise. Kept apart from transport.ts, which decides what
// to send and when to retry; this only carries one request in the protocol that works.

import type { Logger } from "../util/index.ts";
import type { ConnectionTLS } from "./connection.ts";

type Protocol = "http2" | "http1.1";
type FetchFn = (url: string, init: RequestInit & { tls?: ConnectionTLS; protocol?: Protocol }) => Promise<Response>;
type Session = { fetch: FetchFn; close(): void };
type Proxy = { url: string; respectNoProxy: false };

export class Wire {
  // One Bun.FetchSession per TLS configuration: its own keep-alive pool, closed by close().
  private sessionTls: ConnectionTLS | undefined;
  private session?: Session;
  private send!: FetchFn;
  // Bun speaks HTTP/2 only over https, and only when asked: "http2" offers just h2 in ALPN.
  // A server that does not select it fails the request unsent (HTTP2Unsupported); this
  // transport then speaks HTTP/1.1 (named, so a process-wide experimental flag cannot change it).
  private protocol: Protocol | undefined;
  // A kubeconfig's proxy-url is used for every request, NO_PROXY or not (as client-go does); without one, fetch
  // follows HTTPS_PROXY, HTTP_PROXY and NO_PROXY, as kubectl does.
  private readonly proxy: Proxy | undefined;

  constructor(
    private readonly server: string, tls: ConnectionTLS | undefined, http1: boolean | undefined,
    private readonly logger: Logger, proxy?: string,
  ) {
    this.proxy = proxy ? { url: proxy, respectNoProxy: false } : undefined;
    this.protocol = server.startsWith("https:") ? (http1 ? "http1.1" : "http2") : undefined;
    this.useTls(tls);
  }

  /** Sends over a session of `tls`: a new one when it changed since the last request. */
  follow(tls: ConnectionTLS | undefined): void {
    if (tls !== this.sessionTls) this.useTls(tls);
  }

  /**
   * One fetch in this transport's protocol; when the server did not select HTTP/2, HTTP/1.1 from now on, and
   * the request (never sent) is made again.
   */
  async sent(url: string, init: RequestInit & { protocol?: Protocol }): Promise<Response> {
    const protocol = (init.protocol = this.protocol); // the caller's fresh object: no copy on the hot path
    try {
      return await this.send(url, init);
    } catch (cause) {
      if (protocol !== "http2" || (cause as { code?: unknown })?.code !== "HTTP2Unsupported") throw cause;
      if (this.protocol === "http2") {
        this.protocol = "http1.1";
        this.logger.info("the API server did not select HTTP/2: using HTTP/1.1", { server: this.server });
      }
      init.protocol = "http1.1";
      return await this.send(url, init);
    }
  }

  /** Closes idle keep-alive connections; requests in flight finish, and the wire stays usable. */
  close(): void {
    this.session?.close();
  }

  private useTls(tls: ConnectionTLS | undefined): void {
    this.session?.close();
    this.sessionTls = tls;
    const proxy = this.proxy;
    type Init = { tls?: ConnectionTLS; proxy?: Proxy };
    const FetchSession = (Bun as { FetchSession?: new (init: Init) => Session }).FetchSession;
    if (FetchSession) {
      this.session = new FetchSession({ ...(tls ? { tls } : {}), ...(proxy ? { proxy } : {}) });
      this.send = this.session.fetch;
    } else {
      this.session = undefined;
      this.send = tls || proxy
        ? (url, init) => fetch(url, { ...init, tls, proxy } as RequestInit)
        : (url, init) => fetch(url, init);
    }
  }
}
