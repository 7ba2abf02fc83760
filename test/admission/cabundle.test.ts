// In a cluster (`kobun manifests`' configurations, a Service clientConfig, no caBundle), each
// operator start makes a self-signed CA and patches it into its own configurations and CRD
// conversion, keeping the CAs of the replicas before it (the Service may pick any of them).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { issueCertificates } from "../../src/admission/index.ts";
import { webhookObjects } from "../../src/cli/manifests/webhooks.ts";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Logger, memorySink } from "../../src/util/log.ts";

const CRD = {
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "gadgets.kobun.dev" },
  spec: {
    group: "kobun.dev", scope: "Namespaced", names: { plural: "gadgets", kind: "Gadget" },
    versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }],
  },
};

let sandbox: Sandbox;
const registry = new Registry();
registry.on.validate("gadgets.kobun.dev", () => {}, { id: "check" });
registry.on.mutate("gadgets.kobun.dev", () => {}, { id: "fill" });
registry.on.convert("gadgets.kobun.dev", (object) => object);

const apply = async (path: string, doc: unknown) => {
  const response = await fetch(`${sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(doc) });
  expect(response.status).toBe(201);
};

beforeAll(async () => {
  sandbox = await startSandbox();
  await apply("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD);
  for (const doc of webhookObjects("gadget-op", "default", [], registry)) {
    const plural = `${String(doc.kind).toLowerCase()}s`;
    await apply(doc.kind === "Service" ? "/api/v1/namespaces/default/services" : `/apis/admissionregistration.k8s.io/v1/${plural}`, doc);
  }
});
afterAll(() => sandbox.stop());

/** Runs the operator until it started (it patches at start-up), then stops it. */
async function startAndStop(): Promise<void> {
  const stop = new AbortController();
  const settings = resolveSettings({ flags: { kubeconfig: sandbox.kubeconfigPath, namespaces: ["default"], standalone: true, webhooksListen: "127.0.0.1:0", webhooksName: "gadget-op" } });
  const started = Promise.withResolvers<void>();
  const operator = run({ signal: stop.signal, settings, registry, logger: new Logger(memorySink("warn")), onStarted: () => started.resolve() });
  await Promise.race([started.promise, operator.then(() => { throw new Error("the operator ended before it started"); })]);
  stop.abort();
  await operator;
}

const bundles = () => [
  ...["validatingwebhookconfigurations", "mutatingwebhookconfigurations"].map((plural) =>
    sandbox.store.get("admissionregistration.k8s.io", plural, undefined, "gadget-op").webhooks[0].clientConfig.caBundle),
  sandbox.store.get("apiextensions.k8s.io", "customresourcedefinitions", undefined, "gadgets.kobun.dev").spec.conversion.webhook.clientConfig.caBundle,
].map((b: string) => Buffer.from(b, "base64").toString().match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0);

test("each start patches its CA into the configurations and the CRD conversion, keeping the previous replicas' CAs", async () => {
  await startAndStop();
  expect(bundles()).toEqual([1, 1, 1]);
  const first = sandbox.store.get("admissionregistration.k8s.io", "validatingwebhookconfigurations", undefined, "gadget-op").webhooks[0].clientConfig.caBundle;
  await startAndStop();
  expect(bundles()).toEqual([2, 2, 2]);
  const second = Buffer.from(sandbox.store.get("admissionregistration.k8s.io", "validatingwebhookconfigurations", undefined, "gadget-op").webhooks[0].clientConfig.caBundle, "base64").toString();
  // the newest first, the previous one after it
  expect(second.endsWith(Buffer.from(first, "base64").toString())).toBe(true);
  for (let i = 0; i < 5; i++) await startAndStop();
  expect(bundles()).toEqual([5, 5, 5]);
  // the clientConfig still points at the Service
  expect(sandbox.store.get("admissionregistration.k8s.io", "validatingwebhookconfigurations", undefined, "gadget-op").webhooks[0].clientConfig.service)
    .toEqual({ name: "gadget-op", namespace: "default", port: 443, path: "/validate/check" });
}, 30_000);

test("a certificate from files with a caFile: a new CA written there is patched into the caBundle while the operator runs", async () => {
  const dir = mkdtempSync(join(tmpdir(), "kobun-cabundle-"));
  const write = async () => {
    const issued = await issueCertificates(["gadget-op.default.svc"]);
    writeFileSync(join(dir, "tls.crt"), issued.serving.cert);
    writeFileSync(join(dir, "tls.key"), issued.serving.key);
    writeFileSync(join(dir, "ca.crt"), issued.ca.cert);
    return issued.ca.cert;
  };
  const firstCa = (await write()).trim();
  const webhooks = { listen: "127.0.0.1:0", name: "gadget-op", certFile: join(dir, "tls.crt"), keyFile: join(dir, "tls.key"), caFile: join(dir, "ca.crt"), reloadInterval: 0.05 };
  const settings = resolveSettings({ fileData: { webhooks }, flags: { kubeconfig: sandbox.kubeconfigPath, namespaces: ["default"], standalone: true } });
  const stop = new AbortController();
  const started = Promise.withResolvers<void>();
  const operator = run({ signal: stop.signal, settings, registry, logger: new Logger(memorySink("warn")), onStarted: () => started.resolve() });
  const leadingCa = () => Buffer.from(sandbox.store.get("admissionregistration.k8s.io", "validatingwebhookconfigurations", undefined, "gadget-op").webhooks[0].clientConfig.caBundle, "base64")
    .toString().match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/)?.[0];
  try {
    await Promise.race([started.promise, operator.then(() => { throw new Error("the operator ended before it started"); })]);
    expect(leadingCa()).toBe(firstCa);
    const secondCa = (await write()).trim();
    for (const until = Date.now() + 5000; leadingCa() !== secondCa && Date.now() < until;) await Bun.sleep(20);
    expect(leadingCa()).toBe(secondCa);
  } finally {
    stop.abort();
    await operator;
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
