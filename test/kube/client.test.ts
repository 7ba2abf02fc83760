// KubeClient against the sandbox API server: every verb, paging, errors as ApiError with
// the server's Status, retries (429 + Retry-After, 503, 5xx on reads, connection refused),
// abort, and the stream() used by watches.

import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { ApiError, ConnectionError, KubeClient, type KubeObject, type Resource, type Status } from "../../src/kube/index.ts";
import { Logger, memorySink } from "../../src/util/log.ts";

const CM: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const NS: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
const cm = (name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels }, data: { k: "v" } });

let sb: Sandbox;
let client: KubeClient;
const sink = memorySink("debug");

beforeAll(async () => {
  sb = await startSandbox({ token: "s3cr3t-client-token" });
  client = await KubeClient.connect({ kubeconfig: sb.kubeconfigPath, logger: new Logger(sink), retries: 3, backoff: { initialMs: 5, maxMs: 20 } });
});
afterAll(async () => {
  client.close();
  await sb.stop();
});
beforeEach(() => sb.stats.reset());

describe("verbs", () => {
  test("create, get, list, replace, patch (merge/json/strategic), status subresource, delete", async () => {
    const created = await client.create(CM, "default", cm("verbs"));
    expect(created.metadata.uid).toBeString();
    expect((await client.get(CM, "default", "verbs")).data).toEqual({ k: "v" });

    const list = await client.list(CM, { namespace: "default" });
    expect(list.items.map((o) => o.metadata.name)).toContain("verbs");
    expect(list.metadata.resourceVersion).toBeString();

    const replaced = await client.replace(CM, "default", "verbs", { ...created, data: { k: "replaced" } });
    expect(replaced.data).toEqual({ k: "replaced" });

    expect((await client.patch(CM, "default", "verbs", { data: { m: "1" } })).data).toEqual({ k: "replaced", m: "1" });
    const json = await client.patch(CM, "default", "verbs", [{ op: "add", path: "/data/j", value: "2" }], { type: "json" });
    expect(json.data.j).toBe("2");
    const strategic = await client.patch(CM, "default", "verbs", { data: { s: "3" } }, { type: "strategic" });
    expect(strategic.data.s).toBe("3");

    const ns = await client.patch(NS, null, "default", { status: { phase: "Active" } }, { subresource: "status" });
    expect(ns.status?.phase).toBe("Active");

    const deleted = await client.delete(CM, "default", "verbs", { propagationPolicy: "Foreground" });
    expect(deleted).toBeDefined();
    await expect(client.get(CM, "default", "verbs")).rejects.toMatchObject({ code: 404 });
    expect(sb.stats.requests("patch")).toBe(4);
  });

  test("request() builds query strings and parses JSON", async () => {
    await client.create(CM, "default", cm("q1", { sel: "yes" }));
    await client.create(CM, "default", cm("q2", { sel: "no" }));
    const list = await client.request<{ items: KubeObject[] }>("GET", "/api/v1/namespaces/default/configmaps", {
      query: { labelSelector: "sel=yes", limit: 10, continue: undefined },
    });
    expect(list.items.map((o) => o.metadata.name)).toEqual(["q1"]);
    expect(sb.stats.log.at(-1)?.query).toBe("labelSelector=sel%3Dyes&limit=10");
  });
});

test("requests reuse one keep-alive connection (the hot path opens no socket per request)", async () => {
  const ports = new Set<number>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req, srv) {
      ports.add(srv.requestIP(req)!.port);
      return Response.json({ kind: "ConfigMap", metadata: { name: "x" } });
    },
  });
  try {
    const raw = await KubeClient.connect({ kubeconfigText: kubeconfigFor(server.url.href) });
    for (let i = 0; i < 5; i++) await raw.patch(CM, "default", "x", { data: { i: String(i) } });
    for (let i = 0; i < 5; i++) await raw.get(CM, "default", "x");
    expect(ports.size).toBe(1);
    raw.close();
  } finally {
    server.stop(true);
  }
});

test("a write whose answer is discarded resolves with nothing, is applied, and leaves the connection reusable", async () => {
  const ports = new Set<number>();
  let body = "";
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req, srv) {
      ports.add(srv.requestIP(req)!.port);
      body = await req.text();
      // An answer that is not even JSON: parsing it would not give back an object.
      return new Response('{"kind":"ConfigMap","metadata":{"name":"x"}} trailing', { headers: { "content-type": "application/json" } });
    },
  });
  try {
    const raw = await KubeClient.connect({ kubeconfigText: kubeconfigFor(server.url.href) });
    expect(await raw.create(CM, "default", cm("x"), { discardAnswer: true })).toBeUndefined();
    expect(JSON.parse(body).metadata.name).toBe("x");
    expect(await raw.patch(CM, "default", "x", { data: { i: "1" } }, { discardAnswer: true })).toBeUndefined();
    expect(body).toBe('{"data":{"i":"1"}}');
    expect(await raw.patch<any>(CM, "default", "x", { data: { i: "2" } })).toBe('{"kind":"ConfigMap","metadata":{"name":"x"}} trailing');
    expect(ports.size).toBe(1);
    raw.close();
  } finally {
    server.stop(true);
  }
});

describe("paging", () => {
  test("listAll follows continue tokens page by page", async () => {
    for (let i = 0; i < 23; i++) await client.create(CM, "default", cm(`page-${String(i).padStart(2, "0")}`, { paged: "true" }));
    sb.stats.reset();
    const all = await client.listAll(CM, { namespace: "default", labelSelector: "paged=true", pageSize: 5 });
    expect(all.items).toHaveLength(23);
    expect(new Set(all.items.map((o) => o.metadata.name)).size).toBe(23);
    expect(all.metadata.continue).toBeUndefined();
    expect(all.metadata.resourceVersion).toBeString();
    expect(sb.stats.requests("list")).toBe(5);
  });

  test("an expired continue token surfaces as ApiError(410)", async () => {
    sb.faults.failNext(1, 410, { verb: "list" });
    const page = client.listAll(CM, { namespace: "default", labelSelector: "paged=true", pageSize: 5 });
    const error = await page.catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe(410);
    expect(error.status.reason).toBe("Expired");
  });
});

describe("errors", () => {
  test("each non-2xx code is an ApiError carrying the server's Status", async () => {
    for (const code of [400, 403, 404, 405, 409, 410, 415, 422]) {
      sb.faults.failNext(1, code, { verb: "get" });
      const error = await client.get(CM, "default", "whatever").catch((e) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error.code).toBe(code);
      expect(error.status.kind).toBe("Status");
      expect(error.status.code).toBe(code);
      expect(error.message).toContain(`${code}`);
    }
  });

  test("real server errors: NotFound and AlreadyExists", async () => {
    const missing = (await client.get(CM, "default", "nope").catch((e) => e)) as ApiError;
    expect(missing.code).toBe(404);
    expect(missing.reason).toBe("NotFound");
    await client.create(CM, "default", cm("dup"));
    const dup = (await client.create(CM, "default", cm("dup")).catch((e) => e)) as ApiError;
    expect(dup.code).toBe(409);
    expect(dup.reason).toBe("AlreadyExists");
  });

  test("a 429 with Retry-After is retried after the given delay", async () => {
    sb.faults.failNext(2, 429, { verb: "get", retryAfterSeconds: 0.15 });
    const started = performance.now();
    await client.create(CM, "default", cm("throttled"));
    const got = await client.get(CM, "default", "throttled");
    expect(got.metadata.name).toBe("throttled");
    expect(performance.now() - started).toBeGreaterThanOrEqual(280);
    expect(sb.stats.requests("get")).toBe(3);
  });

  test("a write that got 503 (or 429) is retried", async () => {
    await client.create(CM, "default", cm("w503"));
    sb.faults.failNext(2, 503, { verb: "patch", retryAfterSeconds: 0 });
    const patched = await client.patch(CM, "default", "w503", { data: { after: "503" } });
    expect(patched.data.after).toBe("503");
    expect(sb.stats.requests("patch")).toBe(3);
  });

  test("a write that got 500 is not retried (it may have been applied); a read is, until the attempts run out", async () => {
    await client.create(CM, "default", cm("w500"));
    sb.faults.failNext(1, 500, { verb: "patch" });
    await expect(client.patch(CM, "default", "w500", { data: { a: "b" } })).rejects.toMatchObject({ code: 500 });
    expect(sb.stats.requests("patch")).toBe(1);

    sb.faults.failNext(10, 500, { verb: "get" });
    const error = await client.get(CM, "default", "w500").catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe(500);
    expect(sb.stats.requests("get")).toBe(4); // 1 + retries: 3
    sb.stats.reset(); // also clears leftover faults
  });

  test("retry: false disables retries", async () => {
    sb.faults.failNext(1, 503, { verb: "get", retryAfterSeconds: 0 });
    await expect(client.request("GET", "/api/v1/namespaces/default/configmaps/w503", { retry: false })).rejects.toMatchObject({ code: 503 });
  });

  test("a non-Status error body is synthesised into a Status", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("<html>bad gateway</html>", { status: 502 }) });
    try {
      const raw = await KubeClient.connect({ kubeconfigText: kubeconfigFor(server.url.href), retries: 0 });
      const error = (await raw.request("GET", "/api").catch((e) => e)) as ApiError;
      expect(error).toBeInstanceOf(ApiError);
      expect(error.code).toBe(502);
      expect(error.status).toMatchObject({ kind: "Status", code: 502, reason: "InternalError", message: "<html>bad gateway</html>" });
    } finally {
      server.stop(true);
    }
  });

  test("connection refused is a ConnectionError, retried for reads", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("{}") });
    const url = server.url.href;
    server.stop(true);
    const dead = await KubeClient.connect({ kubeconfigText: kubeconfigFor(url), retries: 2, backoff: { initialMs: 5, maxMs: 10 }, logger: new Logger(sink) });
    const before = sink.lines.length;
    const error = await dead.get(CM, "default", "x").catch((e) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toContain("cannot reach");
    // Said once: Bun's message may already start with the code ("ECONNREFUSED: ECONNREFUSED: Unable to connect").
    expect(error.message).not.toMatch(/\b([A-Z][A-Za-z_]+): \1\b/);
    expect(sink.lines.slice(before).filter((l) => l.includes("retrying request"))).toHaveLength(2);
  });
});

describe("abort", () => {
  test("aborting while waiting to retry rejects at once", async () => {
    sb.faults.failNext(5, 503, { verb: "get", retryAfterSeconds: 5 });
    const controller = new AbortController();
    const started = performance.now();
    const pending = client.get(CM, "default", "x", { signal: controller.signal }).catch((e) => e);
    await Bun.sleep(30);
    controller.abort();
    const error = await pending;
    expect(error.name).toBe("AbortError");
    expect(performance.now() - started).toBeLessThan(500);
    sb.stats.reset(); // also clears leftover faults
  });

  test("an already aborted signal rejects without a request", async () => {
    const error = await client.list(CM, { signal: AbortSignal.abort() }).catch((e) => e);
    expect(error.name).toBe("AbortError");
  });
});

describe("stream", () => {
  test("resolves on headers; aborting ends the body promptly", async () => {
    const controller = new AbortController();
    // The headers may only come with the first event, so make one.
    const opening = client.stream(`/api/v1/namespaces/default/configmaps`, { watch: true, resourceVersion: sb.store.resourceVersion() }, controller.signal);
    await client.create(CM, "default", cm("streamed"));
    const response = await opening;
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let text = "";
    while (!text.includes('"streamed"')) text += new TextDecoder().decode((await reader.read()).value);
    const read = reader.read().then(
      (r) => (r.done ? "done" : "data"),
      (e: Error) => e.name,
    );
    await Bun.sleep(20);
    const started = performance.now();
    controller.abort();
    expect(await read).toMatch(/AbortError|done/);
    expect(performance.now() - started).toBeLessThan(100);
  });

  test("a 410 at connect time is an ApiError with the Status", async () => {
    sb.faults.failNext(1, 410, { verb: "watch" });
    const error = await client.stream(`/api/v1/namespaces/default/configmaps`, { watch: true }, new AbortController().signal).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe(410);
    expect((error.status as Status).reason).toBe("Expired");
    expect(sb.stats.requests("watch")).toBe(1);
  });
});

test("no log line carries the token", () => {
  expect(sink.lines.length).toBeGreaterThan(0);
  for (const line of sink.lines) expect(line).not.toContain("s3cr3t-client-token");
});

function kubeconfigFor(server: string): string {
  return JSON.stringify({
    clusters: [{ name: "c", cluster: { server } }],
    users: [{ name: "u", user: {} }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
    "current-context": "x",
  });
}

test("a request with no answer is cut at its deadline and retried, not left hanging", async () => {
  const sandbox = await startSandbox();
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath, requestTimeoutMs: 200, backoff: { initialMs: 10, maxMs: 20 } });
  try {
    sandbox.faults.stallNext(1, 5_000, { verb: "list", plural: "configmaps" });
    const started = performance.now();
    const list = await client.list({ group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false }, { namespace: "default" });
    const ms = performance.now() - started;
    expect(list.items).toEqual([]);
    expect(ms).toBeGreaterThanOrEqual(150); // the stalled attempt waited for its deadline
    expect(ms).toBeLessThan(3000); // and did not wait for the stalled answer (5 s)
    expect(sandbox.stats.requests("list", { plural: "configmaps" })).toBe(2);
  } finally {
    client.close();
    await sandbox.stop();
  }
});
