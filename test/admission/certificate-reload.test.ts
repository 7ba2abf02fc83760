// Reloading the webhook certificate from files while the API server sends reviews: no request
// may fail, since under failurePolicy Fail a reset refuses a user's write. Reviews go over
// keep-alive connections (as the API server's client keeps them) and fresh ones, and the
// certificate is replaced 16 times while they run.

import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { issueCertificates, startWebhookServer, type WebhookServer } from "../../src/admission/index.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { Logger, memorySink } from "../../src/util/log.ts";

let server: WebhookServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const REVIEWS = 1_000, RELOADS = 16, CLIENTS = 8;

test("reloading the certificate 16 times under 1,000 reviews over keep-alive and fresh connections fails none of them", async () => {
  dir = mkdtempSync(join(tmpdir(), "kobun-webhook-reload-"));
  // Each certificate has its own CA, named apart so that a client trusting all of them finds the right one.
  const issued = await Promise.all(Array.from({ length: RELOADS + 1 }, (_, n) => issueCertificates(["127.0.0.1"], 1, `kobun-webhooks-${n}`)));
  const files = { certFile: join(dir, "tls.crt"), keyFile: join(dir, "tls.key") };
  const install = (n: number) => {
    // Renamed into place, key first, as a Secret volume swaps its files: never half a pair.
    writeFileSync(`${files.keyFile}.new`, issued[n]!.serving.key);
    writeFileSync(`${files.certFile}.new`, issued[n]!.serving.cert);
    renameSync(`${files.keyFile}.new`, files.keyFile);
    renameSync(`${files.certFile}.new`, files.certFile);
  };
  install(0);
  const registry = new Registry();
  registry.on.validate("kobunexamples.kobun.dev", () => {}, { id: "any" });
  let installed = 0, reloads = 0, answered = 0, sent = 0, nextReloadAt = 0;
  const step = Math.floor(REVIEWS / (RELOADS + 2));
  const reloadWhenDue = () => {
    if (installed === reloads && installed < RELOADS && answered >= nextReloadAt) install(++installed);
  };
  server = await startWebhookServer({
    hostname: "127.0.0.1", port: 0, registry, logger: new Logger(memorySink("info")), reloadIntervalMs: 5,
    certs: { kind: "files", ...files },
    onReload: () => {
      reloads++;
      nextReloadAt = answered + step;
    },
  });
  const { port } = server;
  const ca = issued.map((i) => i.ca.cert);
  const body = JSON.stringify({
    apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: { uid: "u", operation: "CREATE", kind: { group: "kobun.dev", version: "v1", kind: "KobunExample" }, resource: { group: "kobun.dev", version: "v1", resource: "kobunexamples" }, object: { metadata: { name: "x" } } },
  });
  const failures: string[] = [];
  const deadline = Date.now() + 60_000;
  const client = async (fresh: boolean) => {
    while ((sent < REVIEWS || reloads < RELOADS) && Date.now() < deadline) {
      sent++;
      try {
        const response = await fetch(`https://127.0.0.1:${port}/validate/any`, {
          method: "POST", body, keepalive: !fresh, headers: fresh ? { connection: "close" } : {}, tls: { ca },
        } as RequestInit);
        const review = (await response.json()) as { response?: { allowed?: boolean } };
        if (response.status !== 200 || review.response?.allowed !== true) failures.push(`HTTP ${response.status}`);
      } catch (error) {
        failures.push(`${fresh ? "fresh" : "keep-alive"}: ${(error as { code?: string }).code ?? (error as Error).message}`);
      }
      answered++;
      reloadWhenDue();
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i % 2 === 1)));
  expect({ reloads, failures }).toEqual({ reloads: RELOADS, failures: [] });
  expect(sent).toBeGreaterThanOrEqual(REVIEWS);
}, 90_000);
