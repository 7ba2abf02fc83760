// What stands between a laptop and a remote API server, on 127.0.0.1 for tests: an HTTP CONNECT
// proxy (a kubeconfig's `proxy-url`), an HTTPS reverse proxy that serves the API under a path
// prefix (`server: https://host:port/prefix`), and a plain TCP forwarder on another loopback
// address (so the server certificate does not name the address dialled: `tls-server-name`).
// Each counts what passed through it, so a test can tell that it was used. Plus a throwaway CA
// (openssl) for client certificates (`--client-ca-file`) and the reverse proxy's own certificate.

import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import { createServer as createHttpsServer } from "node:https";
import { join } from "node:path";

export interface Front {
  url: string;
  /** Connections (CONNECT tunnels, forwarded sockets) or requests (reverse proxy) seen so far. */
  readonly seen: number;
  stop(): Promise<void>;
}

/** A CA, a client certificate (CN=`user`, O=`group`) and a serving certificate for 127.0.0.1 and `dnsName`, in `dir`. */
export function makeCertificates(dir: string, o: { user: string; group: string; dnsName: string }) {
  const sh = (command: string) => {
    const r = spawnSync("sh", ["-c", command], { cwd: dir, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${command}: ${r.stderr}`);
  };
  const ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  sh(`openssl req -x509 ${ec} -keyout ca.key -out ca.crt -subj /CN=kobun-test-ca -days 1`);
  sh(`openssl req ${ec} -keyout client.key -out client.csr -subj "/CN=${o.user}/O=${o.group}"`);
  sh("openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 1");
  writeFileSync(join(dir, "san.ext"), `subjectAltName=IP:127.0.0.1,DNS:${o.dnsName}\n`);
  sh(`openssl req ${ec} -keyout front.key -out front.csr -subj /CN=front`);
  sh("openssl x509 -req -in front.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out front.crt -days 1 -extfile san.ext");
  const read = (name: string) => readFileSync(join(dir, name), "utf8");
  return {
    caFile: join(dir, "ca.crt"), caPem: read("ca.crt"),
    clientCertFile: join(dir, "client.crt"), clientKeyFile: join(dir, "client.key"),
    clientCert: read("client.crt"), clientKey: read("client.key"),
    frontCert: read("front.crt"), frontKey: read("front.key"),
  };
}

/** Listens on `host`, hands each socket to `serve`, counts them and destroys them on stop. */
async function tcpFront(host: string, scheme: string, serve: (socket: Socket) => void): Promise<Front> {
  const sockets = new Set<Socket>();
  let seen = 0;
  const server: Server = createServer((socket) => {
    seen++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    serve(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    url: `${scheme}://${host}:${port}`,
    get seen() { return seen; },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Both sockets piped into each other; either end closing closes the other. */
function splice(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  b.on("error", () => a.destroy());
  a.on("close", () => b.destroy());
  b.on("close", () => a.destroy());
}

/** An HTTP proxy that answers CONNECT only (what clients send it for an https server). */
export function startConnectProxy(): Promise<Front> {
  return tcpFront("127.0.0.1", "http", (socket) => {
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      socket.off("data", onData);
      const match = /^CONNECT ([^\s:]+):(\d+) HTTP\/1\.[01]\r\n/.exec(head.subarray(0, end).toString("latin1"));
      if (!match) return void socket.end("HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n");
      const upstream = connect(Number(match[2]), match[1], () => {
        socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        const rest = head.subarray(end + 4);
        if (rest.length) upstream.write(rest);
        splice(socket, upstream);
      });
      upstream.on("error", () => socket.destroy());
    };
    socket.on("data", onData);
  });
}

/** Every connection to `host` (another loopback address) is forwarded to `target` ("127.0.0.1:port"). */
export function startForwarder(host: string, target: string): Promise<Front> {
  const [targetHost, targetPort] = target.split(":") as [string, string];
  return tcpFront(host, "https", (socket) => {
    socket.pause();
    const upstream = connect(Number(targetPort), targetHost, () => {
      splice(socket, upstream);
      socket.resume();
    });
    upstream.on("error", () => socket.destroy());
  });
}

/**
 * An HTTPS server that serves `upstream` (the API server, trusted with `upstreamCa`) under `prefix`, as
 * an ingress or a gateway does: `/prefix/api/v1/...` is sent on as `/api/v1/...`, headers and bodies
 * (watch streams too, their headers flushed at once) as they are; anything outside the prefix is a 404.
 */
export async function startPrefixProxy(
  o: { upstream: string; upstreamCa: string; prefix: string; cert: string; key: string },
): Promise<Front> {
  let seen = 0;
  const server = createHttpsServer({ cert: o.cert, key: o.key }, async (request, response) => {
    const path = request.url ?? "/";
    if (!path.startsWith(`${o.prefix}/`)) return void response.writeHead(404).end("not under the prefix");
    seen++;
    const stop = new AbortController();
    response.on("close", () => stop.abort());
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (name !== "host" && name !== "connection" && typeof value === "string") headers[name] = value;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    try {
      const answer = await fetch(o.upstream + path.slice(o.prefix.length), {
        method: request.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined,
        tls: { ca: o.upstreamCa }, signal: stop.signal, decompress: false,
      });
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => { if (name !== "content-length" && name !== "transfer-encoding") out[name] = value; });
      response.writeHead(answer.status, out);
      response.flushHeaders();
      for await (const chunk of answer.body ?? []) response.write(chunk);
      response.end();
    } catch {
      response.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as { port: number };
  return {
    url: `https://127.0.0.1:${port}${o.prefix}`,
    get seen() { return seen; },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
