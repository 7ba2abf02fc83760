import { expect, test } from "bun:test";
import type { Sandbox } from "kobun/sandbox";
import { sampleObject, type KopfExample } from "../../kopf.ts";
import { examplesPath, runOperator, sandboxWithCrd, type Running } from "../../testing.ts";
import { registry } from "../handlers/example.ts";
import { clientCertificate } from "./client-certificate.ts";

/** A request as kubectl sends it, answered by the sandbox after calling the operator's webhooks. */
async function send(url: string, method: string, path: string, body: unknown) {
  const type = method === "PATCH" ? "application/merge-patch+json" : "application/json";
  const response = await fetch(`${url}${path}`, { method, headers: { "content-type": type }, body: JSON.stringify(body) });
  const json = await response.json() as KopfExample & { message?: string };
  return { code: response.status, body: json, warnings: response.headers.get("warning") ?? "" };
}

const object = (name: string, field: string, labelled = true) => {
  const sample = sampleObject(name);
  const metadata = labelled ? sample.metadata : { name };
  return { apiVersion: "kopf.dev/v1", kind: "KopfExample", ...sample, metadata, spec: { ...sample.spec, field } };
};

/** The operator serving its webhooks over HTTPS (`--webhooks-url`), asking callers for a certificate of `caFile`. */
function serveWebhooks(sandbox: Sandbox, caFile?: string): Promise<Running> {
  return runOperator(sandbox, registry, {
    flags: { webhooksUrl: "https://127.0.0.1:0" }, ...(caFile ? { config: { webhooks: { clientCaFile: caFile } } } : {}),
  });
}

test("17-admission: the operator's webhooks name the caller, validate, refuse and mutate what is written", async () => {
  // The sandbox presents a client certificate, as kube-apiserver does with an admission kubeConfigFile.
  const client = clientCertificate("kube-apiserver-example");
  const sandbox = await sandboxWithCrd([], { webhookClient: { cert: client.cert, key: client.key } });
  const operator = await serveWebhooks(sandbox, client.caFile);
  try {
    const { url } = sandbox;
    const made = await send(url, "POST", examplesPath(), object("fine", "value"));
    expect(made.code).toBe(201);
    expect(made.body.spec.injected).toBe(123); // the mutator, for an object with somelabel=somevalue
    expect(made.warnings).toContain("Accessing as user-agent: kube-apiserver-admission");
    expect(made.warnings).toContain("SSL peer is kube-apiserver-example.");
    expect(made.warnings).toContain("Also update status.field to match spec.field");
    const plain = await send(url, "POST", examplesPath(), object("plain", "value", false));
    expect([plain.code, plain.body.spec.injected]).toEqual([201, undefined]); // no label: not mutated

    const wrong = await send(url, "POST", examplesPath(), object("wrong", "wrong"));
    expect(wrong.code).toBe(400);
    expect(wrong.body.message).toContain("Meh! I don't like it. Change the field.");
    const dry = await send(url, "POST", `${examplesPath()}?dryRun=All`, object("wrong", "wrong"));
    expect(dry.code).toBe(201); // a dry run is let through
    expect(sandbox.store.get("kopf.dev", "kopfexamples", "default", "wrong")).toBeUndefined();

    // validate2 runs only for spec.field == "not-allowed" (its field/value filter); it refuses with its own code.
    const lazy = await send(url, "POST", examplesPath(), object("lazy", "not-allowed"));
    expect(lazy.code).toBe(555);
    expect(lazy.body.message).toContain("I'm too lazy anyway. Go away!");

    // subresources "*": the status subresource's writes are validated too.
    const status = `${examplesPath("fine")}/status`;
    const mismatch = await send(url, "PATCH", status, { status: { field: "other" } });
    expect(mismatch.code).toBe(400);
    expect(mismatch.body.message).toContain("status.field MUST be equal to spec.field!");
    const match = await send(url, "PATCH", status, { status: { field: "value" } });
    expect(match.code).toBe(200);
  } finally {
    await operator.stop();
    await sandbox.stop();
    client.remove();
  }
});

test("17-admission: a caller with no client certificate is not identified", async () => {
  const sandbox = await sandboxWithCrd();
  const operator = await serveWebhooks(sandbox);
  try {
    const made = await send(sandbox.url, "POST", examplesPath(), object("anonymous", "value"));
    expect(made.code).toBe(201);
    expect(made.warnings).toContain("SSL peer is not identified.");
  } finally {
    await operator.stop();
    await sandbox.stop();
  }
});
