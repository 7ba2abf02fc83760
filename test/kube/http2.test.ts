// The transport over HTTP/2: to an https server that selects h2 (the HTTP/2 front of a
// sandbox, test/kube/h2-front.ts, as kube-apiserver does) every request and watch shares one
// connection; aborting one watch ends only that stream; a dropped connection ends every stream
// on it; a server that does not select h2 gets HTTP/1.1, and kube.http1 keeps HTTP/1.1.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { KubeClient, type Resource } from "../../src/kube/index.ts";
import { startH2Front, type H2Front } from "./h2-front.ts";

const TOKEN = "h2-test-token";
const NS: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
const WATCH = "/api/v1/namespaces";
let sandbox: Sandbox;
let dir: string;
const fronts: H2Front[] = [];
const clients: KubeClient[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ token: TOKEN });
  dir = mkdtempSync(join(tmpdir(), "kobun-h2-test-"));
});
afterAll(async () => {
  for (const client of clients) client.close();
  await Promise.all(fronts.map((front) => front.stop()));
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function front(options: { maxStreams?: number; allowHttp1?: boolean } = {}): Promise<H2Front> {
  const started = await startH2Front(sandbox, dir, TOKEN, options);
  fronts.push(started);
  return started;
}

async function clientOf(kubeconfig: string, http1 = false): Promise<KubeClient> {
  const client = await KubeClient.connect({ kubeconfig, http1, retries: 0 });
  clients.push(client);
  return client;
}

/** A watch of namespaces, read chunk by chunk; `ended` settles when the body ends or fails. */
async function watch(client: KubeClient) {
  const abort = new AbortController();
  const response = await client.stream(WATCH, { watch: 1, resourceVersion: "0" }, abort.signal);
  const reader = response.body!.getReader();
  const text = new TextDecoder();
  let seen = "";
  const waiters: { word: string; found(): void }[] = [];
  const ended = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return "done";
        seen += text.decode(value, { stream: true });
        for (const waiter of waiters.splice(0)) if (seen.includes(waiter.word)) waiter.found(); else waiters.push(waiter);
      }
    } catch (error) {
      return `failed: ${(error as Error).name}`;
    }
  })();
  const sees = (word: string) => new Promise<void>((found) => (seen.includes(word) ? found() : waiters.push({ word, found })));
  return { abort, ended, sees };
}

test("requests and watches to an https server that selects HTTP/2 share one connection", async () => {
  const server = await front();
  const client = await clientOf(server.kubeconfigPath);
  await Promise.all(Array.from({ length: 40 }, () => client.request("GET", "/version")));
  const watches = await Promise.all([watch(client), watch(client), watch(client)]);
  await client.create(NS, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: "h2-shared" } });
  await Promise.all(watches.map((w) => w.sees('"h2-shared"')));
  expect(server.sessions).toBe(1);
  expect(server.streams).toBe(40 + 3 + 1);
  for (const w of watches) w.abort.abort();
});

test("aborting one watch stream over HTTP/2 ends just that stream", async () => {
  const server = await front();
  const client = await clientOf(server.kubeconfigPath);
  const [first, second, third] = await Promise.all([watch(client), watch(client), watch(client)]);
  first!.abort.abort();
  expect(await first!.ended).toBe("failed: AbortError");
  await client.create(NS, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: "h2-after-abort" } });
  await Promise.all([second!.sees('"h2-after-abort"'), third!.sees('"h2-after-abort"')]);
  expect(server.sessions).toBe(1);
  second!.abort.abort();
  third!.abort.abort();
});

test("a dropped HTTP/2 connection ends every stream on it, and the next request opens another", async () => {
  const server = await front();
  const client = await clientOf(server.kubeconfigPath);
  const watches = await Promise.all([watch(client), watch(client), watch(client)]);
  await Promise.all(watches.map((w) => w.sees('"default"')));
  server.dropConnections();
  const ends = await Promise.all(watches.map((w) => w.ended));
  for (const end of ends) expect(end).toMatch(/^(done|failed)/);
  expect(await client.request<{ major: string }>("GET", "/version")).toMatchObject({ major: "1" });
  expect(server.sessions).toBe(2);
  // A stream's slot of the process's stream budget is held until its signal aborts (transport.ts):
  // ended streams left unaborted held 3 slots for the rest of the run (many-namespaces.test.ts saw them).
  for (const w of watches) w.abort.abort();
});

test("more streams than the server allows on a connection go over further connections", async () => {
  const server = await front({ maxStreams: 4 });
  const client = await clientOf(server.kubeconfigPath);
  const watches = await Promise.all(Array.from({ length: 6 }, () => watch(client)));
  await client.create(NS, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: "h2-many" } });
  await Promise.all(watches.map((w) => w.sees('"h2-many"')));
  expect(server.sessions).toBeGreaterThanOrEqual(2);
  for (const w of watches) w.abort.abort();
});

test("an https server that does not select HTTP/2 is spoken to over HTTP/1.1, requests and watches", async () => {
  const tls = await startSandbox({ tls: true, token: TOKEN });
  try {
    const client = await clientOf(tls.kubeconfigPath);
    expect(await client.request<{ major: string }>("GET", "/version")).toMatchObject({ major: "1" });
    const w = await watch(client);
    await w.sees('"default"');
    w.abort.abort();
  } finally {
    await tls.stop();
  }
});

test("kube.http1 keeps HTTP/1.1 even to a server that offers HTTP/2", async () => {
  const server = await front({ allowHttp1: true });
  const client = await clientOf(server.kubeconfigPath, true);
  expect(await client.request<{ major: string }>("GET", "/version")).toMatchObject({ major: "1" });
  expect(server.sessions).toBe(0);
});
