// One TLS listener whose certificate can be swapped while it listens. Bun.serve cannot change
// its certificate, and handing its port to a second server (SO_REUSEPORT) and stopping the
// first reset connections: those still in the old socket's accept queue, and keep-alive ones
// a client was writing a request into (1 to 24 ECONNRESETs in each run of 1,000 reviews and
// 16 reloads). node:tls's setSecureContext changes the certificate for the next handshakes
// only: the listening socket and every open connection stay as they are. Each decrypted
// connection is piped to a plain Bun.serve on loopback, which is never restarted (uWebSockets'
// HTTP: half to a third of node:http's time per request on a kept-alive connection here). That
// loopback port takes plain requests from any process of the pod, as the TLS port takes any
// client's: webhook requests are not authenticated either way (the API server's are not signed).

import { connect, type Socket } from "node:net";
import { createServer as createTlsServer } from "node:tls";

type ServeOptions = Bun.Serve.Options<undefined>;

export interface TlsListenerOptions extends Pick<ServeOptions, "fetch" | "error" | "maxRequestBodySize"> {
  hostname: string;
  port: number;
  cert: { cert: string; key: string };
}

export interface TlsListener {
  readonly port: number;
  /** New connections are served with this certificate; open ones keep theirs. */
  setCertificate(cert: { cert: string; key: string }): void;
  /** Stops listening and closes every connection. */
  stop(): Promise<void>;
}

export async function listenTls(options: TlsListenerOptions): Promise<TlsListener> {
  const { fetch, error, maxRequestBodySize } = options;
  const http = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch, error, maxRequestBodySize } as ServeOptions);
  const connections = new Set<Socket>();
  const tls = createTlsServer({ cert: options.cert.cert, key: options.cert.key }, (socket) => {
    const upstream = connect(http.port!, "127.0.0.1");
    connections.add(socket).add(upstream);
    socket.pipe(upstream).pipe(socket);
    // One side closed: the other is ended (after what it still has to write), or cut when the
    // first failed (an error is the client's or the loopback's, not ours to log).
    for (const [one, other] of [[socket, upstream], [upstream, socket]] as const) {
      one.on("error", () => other.destroy());
      one.once("close", () => {
        connections.delete(one);
        other.end();
      });
    }
  });
  // A client that goes away mid-handshake is its own business, not the server's.
  tls.on("tlsClientError", () => {});
  // Connections still in their handshake (or silent) are not among `connections` yet: stop()
  // cuts them too, or closing would wait for them (node's handshakeTimeout: 120 s).
  const accepted = new Set<Socket>();
  tls.on("connection", (raw: Socket) => {
    accepted.add(raw);
    raw.once("close", () => accepted.delete(raw));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      tls.once("error", reject);
      tls.listen({ host: options.hostname, port: options.port, exclusive: true }, () => {
        tls.removeAllListeners("error");
        resolve();
      });
    });
  } catch (cause) {
    await http.stop(true);
    throw new Error(`the port is taken, or may not be bound here (${(cause as Error).message})`);
  }
  return {
    port: (tls.address() as { port: number }).port,
    setCertificate: (cert) => tls.setSecureContext({ cert: cert.cert, key: cert.key }),
    async stop() {
      const closed = new Promise<void>((resolve) => tls.close(() => resolve()));
      for (const socket of [...connections, ...accepted]) socket.destroy();
      await Promise.all([closed, http.stop(true)]);
    },
  };
}
