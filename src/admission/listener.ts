// One TLS listener whose certificate can be swapped while it listens. Bun.serve cannot change
// its certificate, and handing its port to a second server (SO_REUSEPORT) and stopping the
// first reset connections: those still in the old socket's accept queue, and keep-alive ones
// a client was writing a request into (1 to 24 ECONNRESETs in each run of 1,000 reviews and
// 16 reloads). node:tls's setSecureContext changes the certificate for the next handshakes
// only: the listening socket and every open connection stay as they are. Each decrypted
// connection is piped to a plain Bun.serve on loopback, which is never restarted (uWebSockets'
// HTTP: half to a third of node:http's time per request on a kept-alive connection here). That
// loopback port takes plain requests from any process of the pod, as the TLS port takes any
// client's unless `clientCerts` is set: then the TLS layer asks for a client certificate and
// verifies it, and each request learns its connection's certificate (`peer`, null for the
// loopback's own clients) by the local port of the loopback connection it came through.

import { connect, type Socket } from "node:net";
import { createServer as createTlsServer, type PeerCertificate, type TLSSocket } from "node:tls";
import type { AdmissionPeer } from "../declaring/index.ts";

type ServeOptions = Bun.Serve.Options<undefined>;

/** Client certificates: asked for and verified against `ca`; without one, refused when `required`. */
export interface ClientCertPolicy {
  ca: string;
  required: boolean;
}

export interface TlsListenerOptions extends Pick<ServeOptions, "error" | "maxRequestBodySize"> {
  hostname: string;
  port: number;
  cert: { cert: string; key: string };
  clientCerts?: ClientCertPolicy;
  /** Answers one request; `peer` is the verified client certificate of its connection, if any. */
  fetch(request: Request, peer: AdmissionPeer | null): Response | Promise<Response>;
}

export interface TlsListener {
  readonly port: number;
  /** New connections are served with this certificate; open ones keep theirs. */
  setCertificate(cert: { cert: string; key: string }): void;
  /** Stops listening and closes every connection. */
  stop(): Promise<void>;
}

export async function listenTls(options: TlsListenerOptions): Promise<TlsListener> {
  const { error, maxRequestBodySize, clientCerts } = options;
  // The client certificate of each TLS connection, by the local port of its loopback connection.
  const peers = new Map<number, AdmissionPeer | null>();
  const http = Bun.serve({
    hostname: "127.0.0.1", port: 0, error, maxRequestBodySize,
    fetch: (request, server) => options.fetch(request, peers.get(server.requestIP(request)?.port ?? -1) ?? null),
  } as ServeOptions);
  const connections = new Set<Socket>();
  const tls = createTlsServer({ ...secureOptions(options.cert, clientCerts) }, (socket) => {
    const peer = verifiedPeer(socket, clientCerts);
    if (peer === "refused") return void socket.destroy();
    const upstream = connect(http.port!, "127.0.0.1");
    connections.add(socket).add(upstream);
    // Piped once connected, so that the port is known before the first request arrives.
    upstream.once("connect", () => {
      const port = upstream.localPort!;
      peers.set(port, peer);
      upstream.once("close", () => peers.delete(port));
      socket.pipe(upstream).pipe(socket);
    });
    joinClosing(socket, upstream, connections);
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
    setCertificate: (cert) => tls.setSecureContext(secureOptions(cert, clientCerts)),
    async stop() {
      const closed = new Promise<void>((resolve) => tls.close(() => resolve()));
      for (const socket of [...connections, ...accepted]) socket.destroy();
      await Promise.all([closed, http.stop(true)]);
    },
  };
}

/**
 * One side closed: the other is ended (after what it still has to write), or cut when the first
 * failed (an error is the client's or the loopback's, not ours to log).
 */
function joinClosing(socket: Socket, upstream: Socket, connections: Set<Socket>): void {
  for (const [one, other] of [[socket, upstream], [upstream, socket]] as const) {
    one.on("error", () => other.destroy());
    one.once("close", () => {
      connections.delete(one);
      other.end();
    });
  }
}

function secureOptions(cert: { cert: string; key: string }, clientCerts: ClientCertPolicy | undefined) {
  const verify = clientCerts ? { ca: clientCerts.ca, requestCert: true, rejectUnauthorized: clientCerts.required } : {};
  return { cert: cert.cert, key: cert.key, ...verify };
}

/**
 * The connection's client certificate once verified; null when none was asked for or (optional)
 * none was presented; "refused" for one that does not verify against the CA.
 */
function verifiedPeer(socket: TLSSocket, clientCerts: ClientCertPolicy | undefined): AdmissionPeer | null | "refused" {
  if (!clientCerts) return null;
  const certificate: PeerCertificate | undefined = socket.getPeerCertificate();
  if (!certificate || Object.keys(certificate).length === 0) return clientCerts.required ? "refused" : null;
  if (!socket.authorized) return "refused";
  return {
    subject: names(certificate.subject), issuer: names(certificate.issuer), serialNumber: certificate.serialNumber,
    validFrom: certificate.valid_from, validTo: certificate.valid_to, fingerprint256: certificate.fingerprint256,
  };
}

/** A certificate name's attributes as a plain object (node gives a null-prototype one with optional keys). */
function names(name: Record<string, string | string[] | undefined> | undefined): Record<string, string | string[]> {
  return Object.fromEntries(Object.entries(name ?? {}).filter((entry): entry is [string, string | string[]] =>
    entry[1] !== undefined));
}
