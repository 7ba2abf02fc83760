// An HTTP/2-over-TLS front for a plain-http sandbox (node:http2, what kube-apiserver speaks to
// a client that offers h2): each stream is forwarded to the sandbox and its answer streamed
// back. It counts the connections (sessions) and streams it has seen, and can drop every
// connection at once, as a restarting API server or a broken network would.

import { createSecureServer, type Http2Session, type ServerHttp2Stream } from "node:http2";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sandboxCerts } from "../../packages/sandbox/src/tls.ts";
import type { Sandbox } from "@kobun/sandbox";

export interface H2Front {
  url: string;
  /** A kubeconfig for the front, with the sandbox's token. */
  kubeconfigPath: string;
  /** Connections (HTTP/2 sessions) accepted so far. */
  readonly sessions: number;
  /** Streams opened so far (requests and watches). */
  readonly streams: number;
  /** Destroys every open connection (every stream on it breaks off). */
  dropConnections(): void;
  stop(): Promise<void>;
}

/** `maxStreams`: streams a client may open per connection; `allowHttp1`: HTTP/1.1 clients are served too (not counted as sessions). */
export async function startH2Front(sandbox: Sandbox, dir: string, token: string, { maxStreams = 100, allowHttp1 = false } = {}): Promise<H2Front> {
  const certs = sandboxCerts();
  const open = new Set<Http2Session>();
  let sessions = 0;
  let streams = 0;
  const server = createSecureServer({ key: certs.serverKey, cert: certs.serverCert, allowHTTP1: allowHttp1, settings: { maxConcurrentStreams: maxStreams } });
  server.on("session", (session) => {
    sessions++;
    open.add(session);
    session.on("close", () => open.delete(session));
  });
  server.on("request", (request, response) => {
    // HTTP/1.1 (allowHttp1): answered directly, since only h2 streams are forwarded.
    if (request.httpVersion === "2.0") return;
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ major: "1", minor: "37" }));
  });
  server.on("stream", (stream, headers) => {
    streams++;
    void forward(sandbox.url, stream as ServerHttp2Stream, headers).catch(() => stream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const url = `https://127.0.0.1:${port}`;
  const kubeconfigPath = join(dir, "h2-front.kubeconfig");
  writeFileSync(kubeconfigPath, JSON.stringify({
    apiVersion: "v1", kind: "Config", "current-context": "front",
    clusters: [{ name: "front", cluster: { server: url, "certificate-authority-data": Buffer.from(certs.ca).toString("base64") } }],
    users: [{ name: "front", user: { token } }],
    contexts: [{ name: "front", context: { cluster: "front", user: "front" } }],
  }), { mode: 0o600 });
  return {
    url, kubeconfigPath,
    get sessions() { return sessions; },
    get streams() { return streams; },
    dropConnections() { for (const session of open) session.destroy(); },
    stop: () => {
      for (const session of open) session.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function forward(target: string, stream: ServerHttp2Stream, headers: Record<string, string | string[] | undefined>): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const abort = new AbortController();
  stream.on("close", () => abort.abort());
  const forwarded: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!name.startsWith(":") && typeof value === "string") forwarded[name] = value;
  const method = String(headers[":method"]);
  const response = await fetch(target + String(headers[":path"]), {
    method, headers: forwarded, signal: abort.signal, body: chunks.length ? Buffer.concat(chunks) : undefined,
  });
  const answer: Record<string, string | number> = { ":status": response.status };
  response.headers.forEach((value, name) => {
    if (name !== "connection" && name !== "transfer-encoding" && name !== "keep-alive") answer[name] = value;
  });
  stream.respond(answer);
  if (response.body) for await (const chunk of response.body) stream.write(chunk);
  stream.end();
}
