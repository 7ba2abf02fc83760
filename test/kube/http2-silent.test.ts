// Over HTTP/2 one connection carries every request and watch; one that goes silent (a middlebox
// lost its state: no error, no bytes) must not take the retries and re-watches too (client-go's
// HTTP/2 transport needed ReadIdleTimeout for this). Bun's client already opens a new connection
// for a request whose stream was aborted on a silent one (the deadline) and for a re-watch after
// the watcher's inactivity timeout: these tests hold it to that.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { KubeClient, type Resource } from "../../src/kube/index.ts";
import { Watcher } from "../../src/watching/index.ts";
import { proxiedKubeconfig } from "../runtime/lease-replicas.ts";
import { startTcpProxy, type TcpProxy } from "../runtime/tcp-proxy.ts";
import { startH2Front, type H2Front } from "./h2-front.ts";

const TOKEN = "h2-silent-token";
const NS: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
let sandbox: Sandbox;
let dir: string;
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ token: TOKEN });
  dir = mkdtempSync(join(tmpdir(), "kobun-h2-silent-"));
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The HTTP/2 front, a TCP proxy before it, and a client through the proxy. */
async function silenceable(name: string, requestTimeoutMs: number): Promise<{ front: H2Front; proxy: TcpProxy; client: KubeClient }> {
  const front = await startH2Front(sandbox, dir, TOKEN);
  closers.push(() => front.stop());
  const proxy = startTcpProxy(new URL(front.url));
  closers.push(() => proxy.close());
  const kubeconfig = join(dir, `${name}.yaml`);
  writeFileSync(kubeconfig, proxiedKubeconfig(readFileSync(front.kubeconfigPath, "utf8"), proxy.url), { mode: 0o600 });
  const client = await KubeClient.connect({ kubeconfig, retries: 3, requestTimeoutMs });
  closers.push(() => client.close());
  return { front, proxy, client };
}

test("a request whose HTTP/2 connection went silent is retried over a new connection, not the silent one", async () => {
  const { front, proxy, client } = await silenceable("request", 1000);
  await client.request("GET", "/version");
  expect(front.sessions).toBe(1);
  proxy.silenceOpen();
  // Before: every attempt went to the silent connection and timed out; the request failed.
  expect(await client.request<{ major: string }>("GET", "/version")).toMatchObject({ major: "1" });
  expect(front.sessions).toBeGreaterThanOrEqual(2);
}, 20_000);

test("a watch whose HTTP/2 connection went silent re-watches over a new connection", async () => {
  const { front, proxy, client } = await silenceable("watch", 60_000); // no request deadline expires here
  const direct = await KubeClient.connect({ kubeconfig: front.kubeconfigPath, retries: 3 });
  closers.push(() => direct.close());
  const watcher = new Watcher(client, NS, { namespace: null, streamingList: "never", inactivityTimeoutMs: 1000 });
  const stop = new AbortController();
  const seen = new Set<string>();
  let waiter: { name: string; found(): void } | undefined;
  const reading = (async () => {
    for await (const event of watcher.events(stop.signal)) {
      if ("object" in event) seen.add(event.object.metadata.name!);
      if (waiter && seen.has(waiter.name)) waiter.found();
    }
  })().catch(() => {});
  const sees = (name: string) => new Promise<void>((found) => (seen.has(name) ? found() : (waiter = { name, found })));
  try {
    await sees("default");
    proxy.silenceOpen();
    await direct.create(NS, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: "h2-after-silence" } });
    await sees("h2-after-silence");
  } finally {
    stop.abort();
    await reading;
  }
}, 20_000);
