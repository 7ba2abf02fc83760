// The webhook server answering AdmissionReviews and ConversionReviews over real HTTPS on
// 127.0.0.1, as the API server sends them: refusals carry the handler's message, mutations
// come back as a JSON Patch, a crashing handler is a generic refusal (never an HTTP 500), a
// slow one is cut at its timeout, and a certificate from files is reloaded when they change.

import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSettings } from "../../src/config/index.ts";
import { issueCertificates, startWebhookServer, type WebhookServer } from "../../src/admission/index.ts";
import { AdmissionError } from "../../src/declaring/kinds/webhooks.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { jsonPatch } from "../../packages/sandbox/src/patch.ts";
import { Logger, memorySink } from "../../src/util/log.ts";

let server: WebhookServer | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await server?.stop();
  server = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function serve(registry: Registry, sink = memorySink("debug")) {
  server = await startWebhookServer({ hostname: "127.0.0.1", port: 0, certs: { kind: "self-signed", hosts: ["127.0.0.1"] }, registry, logger: new Logger(sink), reloadIntervalMs: resolveSettings().webhooks.reloadInterval * 1000 });
  return { server, sink };
}

function review(operation: string, object: unknown, oldObject: unknown = null) {
  return {
    apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {
      uid: crypto.randomUUID(), kind: { group: "kobun.dev", version: "v1", kind: "KobunExample" },
      resource: { group: "kobun.dev", version: "v1", resource: "kobunexamples" }, name: "x", namespace: "default",
      operation, userInfo: { username: "alice" }, object, oldObject, dryRun: false,
    },
  };
}

async function post(s: WebhookServer, path: string, body: unknown, ca = s.caBundle) {
  const response = await fetch(`https://127.0.0.1:${s.port}${path}`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), tls: { ca },
  } as RequestInit);
  return { status: response.status, body: (await response.json()) as any };
}

const example = (spec: Record<string, unknown>) => ({ apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "x", namespace: "default" }, spec });

test("a validator's AdmissionError refuses the request with its message, code and warnings", async () => {
  const registry = new Registry();
  registry.on.validate("kobunexamples.kobun.dev", ({ object }) => {
    if (!(object.spec?.size > 0)) throw new AdmissionError("spec.size must be positive", { code: 422, warnings: ["size was checked"] });
  }, { id: "size" });
  const { server } = await serve(registry);
  const refused = await post(server, "/validate/size", review("CREATE", example({ size: 0 })));
  expect(refused.status).toBe(200);
  expect(refused.body.response).toMatchObject({ allowed: false, status: { code: 422, message: "spec.size must be positive" }, warnings: ["size was checked"] });
  const allowed = await post(server, "/validate/size", review("CREATE", example({ size: 3 })));
  expect(allowed.body.response.allowed).toBe(true);
});

test("a mutator that changes the object in place is answered with the JSON Patch that makes that change", async () => {
  const registry = new Registry();
  registry.on.mutate("kobunexamples.kobun.dev/v1", ({ object }) => {
    object.spec!.size ??= 1;
    object.metadata.labels = { ...object.metadata.labels, defaulted: "yes" };
    delete object.spec!.obsolete;
  }, { id: "defaults" });
  const { server } = await serve(registry);
  const original = example({ obsolete: true, name: "a/b~c" });
  const { body } = await post(server, "/mutate/defaults", review("CREATE", original));
  expect(body.response).toMatchObject({ allowed: true, patchType: "JSONPatch" });
  const patch = JSON.parse(Buffer.from(body.response.patch, "base64").toString());
  expect(jsonPatch(original, patch)).toEqual({ ...original, metadata: { ...original.metadata, labels: { defaulted: "yes" } }, spec: { name: "a/b~c", size: 1 } });
});

test("a handler that throws an unexpected error refuses with a generic message; the details go only to the log", async () => {
  const registry = new Registry();
  registry.on.validate("kobunexamples.kobun.dev", () => {
    throw new Error("db password is hunter2");
  }, { id: "crashing" });
  const { server, sink } = await serve(registry);
  const { status, body } = await post(server, "/validate/crashing", review("CREATE", example({})));
  expect(status).toBe(200);
  expect(body.response.allowed).toBe(false);
  expect(body.response.status.message).toBe("admission handler crashing failed; the operator's log has the details");
  expect(JSON.stringify(body)).not.toContain("hunter2");
  expect(sink.lines.some((line) => line.includes("hunter2"))).toBe(true);
  // and it still serves
  expect((await post(server, "/validate/crashing", review("CREATE", example({})))).status).toBe(200);
});

test("a slow handler is cut at its timeout: refused under failurePolicy Fail, allowed with a warning under Ignore", async () => {
  const registry = new Registry();
  let sawAbort = false;
  const slow = async ({ signal }: { signal: AbortSignal }) => {
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    sawAbort = true;
  };
  registry.on.validate("kobunexamples.kobun.dev", slow, { id: "slow", timeoutSeconds: 1 });
  registry.on.validate("kobunexamples.kobun.dev", slow, { id: "slow-ignored", timeoutSeconds: 1, failurePolicy: "Ignore" });
  const { server } = await serve(registry);
  const started = performance.now();
  const [failed, ignored] = await Promise.all([
    post(server, "/validate/slow", review("CREATE", example({}))),
    post(server, "/validate/slow-ignored", review("CREATE", example({}))),
  ]);
  const elapsed = performance.now() - started;
  expect(failed.body.response).toMatchObject({ allowed: false, status: { code: 504 } });
  expect(ignored.body.response.allowed).toBe(true);
  expect(ignored.body.response.warnings[0]).toContain("did not answer within its timeout (1s)");
  // cut at 750 ms, before the API server's own 1 s, so that this answer decides (the upper bound allows a busy machine)
  expect(elapsed).toBeGreaterThanOrEqual(700);
  expect(elapsed).toBeLessThan(2500);
  expect(sawAbort).toBe(true);
});

test("operations and label filters decide which requests a handler sees; the others are allowed untouched", async () => {
  const registry = new Registry();
  registry.on.validate("kobunexamples.kobun.dev", () => {
    throw new AdmissionError("no");
  }, { id: "strict", operations: ["UPDATE"], labels: { strict: "true" } });
  const { server } = await serve(registry);
  const labelled = { ...example({}), metadata: { name: "x", labels: { strict: "true" } } };
  expect((await post(server, "/validate/strict", review("CREATE", labelled))).body.response.allowed).toBe(true);
  expect((await post(server, "/validate/strict", review("UPDATE", example({}), example({})))).body.response.allowed).toBe(true);
  expect((await post(server, "/validate/strict", review("UPDATE", labelled, labelled))).body.response.allowed).toBe(false);
});

test("a ConversionReview is answered by the CRD's table of version-to-version functions", async () => {
  const registry = new Registry();
  registry.on.convert("kobunexamples.kobun.dev", {
    "v1->v2": (o) => ({ ...o, spec: { replicas: o.spec!.size } }),
    "v2->v1": (o) => ({ ...o, spec: { size: o.spec!.replicas } }),
  });
  const { server } = await serve(registry);
  const request = { uid: "u1", desiredAPIVersion: "kobun.dev/v2", objects: [example({ size: 2 }), { ...example({ replicas: 5 }), apiVersion: "kobun.dev/v2" }] };
  const { body } = await post(server, "/convert/kobunexamples.kobun.dev", { apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview", request });
  expect(body.response.result.status).toBe("Success");
  expect(body.response.convertedObjects.map((o: any) => [o.apiVersion, o.spec])).toEqual([["kobun.dev/v2", { replicas: 2 }], ["kobun.dev/v2", { replicas: 5 }]]);
  const missing = await post(server, "/convert/kobunexamples.kobun.dev", { apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview", request: { ...request, desiredAPIVersion: "kobun.dev/v3" } });
  expect(missing.body.response.result.status).toBe("Failure");
});

test("a body that is not an AdmissionReview v1 gets 400 with what was expected", async () => {
  const registry = new Registry();
  registry.on.validate("kobunexamples.kobun.dev", () => {}, { id: "any" });
  const { server } = await serve(registry);
  const { status } = await fetch(`https://127.0.0.1:${server.port}/validate/any`, {
    method: "POST", body: JSON.stringify({ ...review("CREATE", {}), apiVersion: "admission.k8s.io/v1beta1" }), tls: { ca: server.caBundle },
  } as RequestInit);
  expect(status).toBe(400);
});

test("a review nested 200,000 levels deep gets 400 saying so, on the admission and the conversion paths; 10,000 levels in all are answered", async () => {
  const registry = new Registry();
  registry.on.validate("kobunexamples.kobun.dev", () => {}, { id: "any" });
  registry.on.convert("kobunexamples.kobun.dev", (o) => o);
  const { server } = await serve(registry);
  const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
  const admission = (depth: number) => JSON.stringify(review("CREATE", example({ deep: "DEEP" }))).replace('"DEEP"', nested(depth));
  const conversion = (depth: number) => `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"kobun.dev/v1","objects":[{"apiVersion":"kobun.dev/v2","spec":${nested(depth)}}]}}`;
  const send = async (path: string, body: string) => {
    const response = await fetch(`https://127.0.0.1:${server.port}${path}`, { method: "POST", body, tls: { ca: server.caBundle } } as RequestInit);
    return { status: response.status, text: await response.text() };
  };
  for (const [path, body] of [["/validate/any", admission], ["/convert/kobunexamples.kobun.dev", conversion]] as const) {
    const started = performance.now();
    expect(await send(path, body(200_000))).toEqual({ status: 400, text: "the body is nested deeper than 10000 levels, which no API server sends\n" });
    expect(performance.now() - started).toBeLessThan(2000);
    const answered = await send(path, body(9_990)); // 10,000 with the review around it
    expect(answered.status).toBe(200);
    expect(answered.text).toContain(path.startsWith("/convert") ? '"status":"Success"' : '"allowed":true');
  }
  expect((await send("/validate/any", "{")).status).toBe(400);
});

test("a certificate from files is served again after the files change, without a restart", async () => {
  const dir = mkdtempSync(join(tmpdir(), "kobun-webhook-certs-"));
  dirs.push(dir);
  const write = async () => {
    const issued = await issueCertificates(["127.0.0.1"]);
    writeFileSync(join(dir, "tls.crt"), issued.serving.cert);
    writeFileSync(join(dir, "tls.key"), issued.serving.key);
    return issued.ca.cert;
  };
  const first = await write();
  const registry = new Registry();
  registry.on.validate("kobunexamples.kobun.dev", () => {}, { id: "any" });
  server = await startWebhookServer({
    hostname: "127.0.0.1", port: 0, registry, logger: new Logger(memorySink("info")), reloadIntervalMs: 50,
    certs: { kind: "files", certFile: join(dir, "tls.crt"), keyFile: join(dir, "tls.key") },
  });
  expect((await post(server, "/validate/any", review("CREATE", example({})), first)).status).toBe(200);
  const second = await write();
  const s = server;
  let reloaded = false;
  for (const until = Date.now() + 5000; !reloaded && Date.now() < until; await Bun.sleep(20)) {
    reloaded = await post(s, "/validate/any", review("CREATE", example({})), second).then(() => true, () => false);
  }
  expect(reloaded).toBe(true);
});

test("registering a webhook checks its options against the API server's rules", () => {
  const registry = new Registry();
  expect(() => registry.on.validate("kobunexamples.kobun.dev", () => {}, { id: "t", timeoutSeconds: 31 })).toThrow("timeoutSeconds must be an integer from 1 to 30");
  expect(() => registry.on.validate("kobunexamples.kobun.dev", () => {}, { id: "Bad_Id" })).toThrow("the id must be lowercase");
  expect(() => registry.on.mutate("kobunexamples.kobun.dev", () => {}, { id: "o", operations: ["PATCH" as never] })).toThrow("operations must be");
  expect(() => registry.on.convert("kobunexamples", () => ({}) as never)).toThrow("with its group");
  expect(() => registry.on.validate("kobunexamples.kobun.dev", () => {}, { id: "s", subresources: ["status/x"] })).toThrow('subresources must be a list of subresource names like "status", or ["*"] for all');
  expect(() => registry.on.validate("kobunexamples.kobun.dev", () => {}, { id: "f", field: "" })).toThrow('field must be a dotted path like "spec.size"');
  expect(() => registry.on.validate("kobunexamples.kobun.dev", () => {}, { id: "v", value: "x" })).toThrow("value needs a field to match");
});

test("stop() ends at once with a client connected that never completes its TLS handshake", async () => {
  const { server: s } = await serve(new Registry());
  const { connect } = await import("node:net");
  const silent = connect(s.port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => silent.once("connect", () => resolve()).once("error", reject));
  const started = performance.now();
  await s.stop();
  server = undefined;
  // Closing waited for the handshake before (node's handshakeTimeout: 120 s); 4 s holds under load.
  expect(performance.now() - started).toBeLessThan(4000);
  silent.destroy();
});
