// Client certificates on the webhook server's TLS (webhooks.clientCaFile): asked for only when
// configured; one signed by that CA reaches the handler as `ctx.peer`; one signed by another CA
// is refused at the connection; none at all is served with `peer` null, or refused when
// required. Real HTTPS on 127.0.0.1, clients made with fetch's TLS options.

import { afterEach, expect, test } from "bun:test";
import { issueCertificates, startWebhookServer, type WebhookServer } from "../../src/admission/index.ts";
import { sandboxCerts } from "../../packages/sandbox/src/tls.ts";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/registry.ts";
import type { AdmissionContext } from "../../src/declaring/kinds/webhooks.ts";
import { Logger, memorySink } from "../../src/util/log.ts";

let server: WebhookServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const seen: AdmissionContext[] = [];

async function serve(clientCerts?: { ca: string; required: boolean }): Promise<WebhookServer> {
  const registry = new Registry();
  registry.on.validate("kobunexamples.kobun.dev", (ctx) => void seen.push(ctx), { id: "who" });
  const reloadIntervalMs = resolveSettings().webhooks.reloadInterval * 1000;
  server = await startWebhookServer({
    hostname: "127.0.0.1", port: 0, certs: { kind: "self-signed", hosts: ["127.0.0.1"] }, registry,
    logger: new Logger(memorySink("warn")), reloadIntervalMs, ...(clientCerts ? { clientCerts } : {}),
  });
  return server;
}

const review = () => ({
  apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
  request: {
    uid: crypto.randomUUID(), kind: { group: "kobun.dev", version: "v1", kind: "KobunExample" },
    resource: { group: "kobun.dev", version: "v1", resource: "kobunexamples" }, name: "x", namespace: "default",
    operation: "CREATE", userInfo: { username: "alice" }, object: { metadata: { name: "x" } }, oldObject: null,
  },
});

/** POSTs a review as `client` (a certificate and key, or none); the handler's context, or the failure. */
async function call(s: WebhookServer, client?: { cert: string; key: string }, headers: Record<string, string> = {}) {
  seen.length = 0;
  const response = await fetch(`https://127.0.0.1:${s.port}/validate/who`, {
    method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(review()),
    tls: { ca: s.caBundle, ...client },
  } as RequestInit).catch((error: Error) => error);
  if (response instanceof Error) return { failed: response.message };
  expect((await response.json() as any).response.allowed).toBe(true);
  return { ctx: seen[0]! };
}

const sandbox = sandboxCerts();
const apiserver = { cert: sandbox.clientCert, key: sandbox.clientKey };

test("without clientCaFile no certificate is asked for: peer is null, and headers are the request's", async () => {
  const s = await serve();
  const { ctx } = await call(s, apiserver, { authorization: "Bearer abc", "x-audit": "1" });
  expect(ctx!.peer).toBeNull();
  expect(ctx!.headers).toMatchObject({ authorization: "Bearer abc", "x-audit": "1", "content-type": "application/json" });
});

test("a certificate the CA signed is the handler's peer; another CA's is refused at the connection", async () => {
  const s = await serve({ ca: sandbox.ca, required: false });
  const { ctx } = await call(s, apiserver);
  expect(ctx!.peer).toMatchObject({ subject: { CN: "kobun-sandbox", O: "system:masters" }, issuer: { CN: expect.any(String) } });
  expect(ctx!.peer!.serialNumber).toMatch(/^[0-9A-F]+$/);
  expect(new Date(ctx!.peer!.validTo).getTime()).toBeGreaterThan(Date.now());

  const foreign = await issueCertificates(["kube-apiserver"], 1, "someone-else");
  const refused = await call(s, { cert: foreign.serving.cert, key: foreign.serving.key });
  expect(refused.failed).toBeString();
  expect(seen).toEqual([]);
});

test("no certificate: served with peer null when optional, refused when required", async () => {
  const optional = await serve({ ca: sandbox.ca, required: false });
  expect((await call(optional)).ctx!.peer).toBeNull();
  await optional.stop();
  const required = await serve({ ca: sandbox.ca, required: true });
  expect((await call(required)).failed).toBeString();
  expect(seen).toEqual([]);
  expect((await call(required, apiserver)).ctx!.peer!.subject.CN).toBe("kobun-sandbox");
});
