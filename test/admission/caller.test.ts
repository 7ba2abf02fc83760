// What an admission handler learns of its call, with the sandbox calling as kube-apiserver does:
// the request's headers (`ctx.headers`), the client certificate the sandbox presents verified
// against webhooks.clientCaFile (`ctx.peer`), `ctx.dryRun` and the review's `options`; and which
// calls reach a handler at all: `subresources` (["*"] for every one) and `field`/`value`.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { sandboxCerts } from "../../packages/sandbox/src/tls.ts";
import { resolveSettings } from "../../src/config/index.ts";
import { ABSENT } from "../../src/declaring/filters.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { AdmissionError, type AdmissionContext } from "../../src/declaring/kinds/webhooks.ts";
import { run } from "../../src/runtime/operator.ts";
import { Logger, memorySink } from "../../src/util/log.ts";

const CRD = {
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "gadgets.kobun.dev" },
  spec: {
    group: "kobun.dev", scope: "Namespaced", names: { plural: "gadgets", singular: "gadget", kind: "Gadget" },
    versions: [{
      name: "v1", served: true, storage: true,
      subresources: { status: {}, scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" } },
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
    }],
  },
};

/** Every call each recording handler got, by its id. */
const calls = new Map<string, AdmissionContext[]>();
const record = (id: string) => (ctx: AdmissionContext) => void calls.set(id, [...(calls.get(id) ?? []), ctx]);
const seen = (id: string, name: string) => (calls.get(id) ?? []).filter((c) => c.name === name);

function handlers(): Registry {
  const registry = new Registry();
  const operations = ["CREATE", "UPDATE", "DELETE"] as const;
  registry.on.validate("gadgets.kobun.dev", record("main"), { id: "main", operations });
  registry.on.validate("gadgets.kobun.dev", record("every"), { id: "every", subresources: ["*"] });
  registry.on.validate("gadgets.kobun.dev", record("status"), { id: "status", subresources: ["status"] });
  registry.on.validate("gadgets.kobun.dev", record("has-mode"), { id: "has-mode", field: "spec.mode" });
  registry.on.validate("gadgets.kobun.dev", ({ object }) => {
    if (object.spec?.size > 3) throw new AdmissionError("strict gadgets have at most 3 parts");
  }, { id: "strict", field: ["spec", "mode"], value: "strict" });
  registry.on.validate("gadgets.kobun.dev", record("no-mode"), { id: "no-mode", field: "spec.mode", value: ABSENT });
  registry.on.validate("gadgets.kobun.dev", record("big"), { id: "big", field: "spec.size", value: (v) => v > 10 });
  registry.on.mutate("gadgets.kobun.dev", ({ object, subresource }) => {
    if (subresource === "scale") object.spec = { ...object.spec, replicas: Math.min(object.spec?.replicas, 5) };
  }, { id: "cap", subresources: ["scale"], operations: ["UPDATE"] });
  return registry;
}

let sandbox: Sandbox;
let dir: string;
let stopOperator: (() => Promise<void>) | undefined;
const gadgets = () => `${sandbox.url}/apis/kobun.dev/v1/namespaces/default/gadgets`;
const send = (method: string, path: string, body: unknown, type = "application/json") =>
  fetch(`${gadgets()}${path}`, { method, headers: { "content-type": type }, body: JSON.stringify(body) });
const gadget = (name: string, spec: Record<string, unknown>) =>
  ({ apiVersion: "kobun.dev/v1", kind: "Gadget", metadata: { name }, spec });

beforeAll(async () => {
  const certs = sandboxCerts();
  // The sandbox presents its client certificate (CN=kobun-sandbox, O=system:masters) to webhooks.
  sandbox = await startSandbox({ webhookClient: { cert: certs.clientCert, key: certs.clientKey } });
  await fetch(`${sandbox.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`,
    { method: "POST", body: JSON.stringify(CRD), headers: { "content-type": "application/json" } });
  dir = mkdtempSync(join(tmpdir(), "kobun-caller-"));
  writeFileSync(join(dir, "client-ca.pem"), certs.ca);
  const settings = resolveSettings({
    fileData: { webhooks: { clientCaFile: join(dir, "client-ca.pem"), clientCertRequired: true } },
    flags: { kubeconfig: sandbox.kubeconfigPath, namespaces: ["default"], standalone: true, webhooksUrl: "https://127.0.0.1:0" },
  });
  const stop = new AbortController();
  const started = Promise.withResolvers<void>();
  const running = run({ signal: stop.signal, settings, registry: handlers(), logger: new Logger(memorySink("warn")), onStarted: () => started.resolve() });
  const early = running.then(() => Promise.reject(new Error("the operator ended before it started")));
  await Promise.race([started.promise, early]);
  stopOperator = async () => {
    stop.abort();
    await running;
  };
});
afterAll(async () => {
  await stopOperator?.();
  await sandbox?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("handlers see the review's headers and the caller's verified client certificate", async () => {
  expect((await send("POST", "", gadget("headers", { size: 1 }))).status).toBe(201);
  const [call] = seen("main", "headers");
  expect(call!.headers).toMatchObject({
    "content-type": "application/json", accept: "application/json, */*", "user-agent": "kube-apiserver-admission",
  });
  expect(Number(call!.headers["content-length"])).toBeGreaterThan(100);
  expect(call!.peer?.subject).toEqual({ CN: "kobun-sandbox", O: "system:masters" });
  expect(call!.peer?.issuer.CN).toBeString();
  expect(call!.peer?.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
});

test("ctx.dryRun and the review's options are the write's, as kube-apiserver passes them", async () => {
  const dry = await send("POST", "?dryRun=All&fieldManager=me&fieldValidation=Strict", { ...gadget("", { size: 1 }), metadata: { generateName: "dry-" } });
  expect(dry.status).toBe(201);
  const name = ((await dry.json()) as any).metadata.name as string;
  const [call] = seen("main", name);
  expect(name).toMatch(/^dry-[a-z0-9]{5}$/);
  expect([call!.dryRun, call!.request.dryRun, call!.object.metadata.name]).toEqual([true, true, name]);
  expect(call!.request.options).toEqual({ kind: "CreateOptions", apiVersion: "meta.k8s.io/v1", dryRun: ["All"], fieldManager: "me", fieldValidation: "Strict" });
  expect(await fetch(`${gadgets()}/${name}`).then((r) => r.status)).toBe(404);

  await send("POST", "", gadget("wet", { size: 1 }));
  await send("PATCH", "/wet?dryRun=All", { spec: { size: 2 } }, "application/merge-patch+json");
  await send("DELETE", "/wet", { dryRun: ["All"], propagationPolicy: "Foreground" });
  await send("DELETE", "/wet", undefined);
  const wet = seen("main", "wet").map((c) => [c.operation, c.dryRun, c.request.options]);
  expect(wet).toEqual([
    ["CREATE", false, { kind: "CreateOptions", apiVersion: "meta.k8s.io/v1" }],
    ["UPDATE", true, { kind: "UpdateOptions", apiVersion: "meta.k8s.io/v1", dryRun: ["All"] }],
    ["DELETE", true, { kind: "DeleteOptions", apiVersion: "meta.k8s.io/v1", dryRun: ["All"], propagationPolicy: "Foreground" }],
    ["DELETE", false, { kind: "DeleteOptions", apiVersion: "meta.k8s.io/v1" }],
  ]);
});

test('subresources: ["*"] gets every subresource (status, scale), ["status"] that one, none only the object itself', async () => {
  await send("POST", "", gadget("sub", { size: 1 }));
  const status = await send("PATCH", "/sub/status", { status: { ready: true } }, "application/merge-patch+json");
  expect(status.status).toBe(200);
  const subresources = (id: string) => seen(id, "sub").map((c) => c.subresource ?? "-");
  expect(subresources("every")).toEqual(["-", "status"]);
  expect(subresources("status")).toEqual(["-", "status"]);
  expect(subresources("main")).toEqual(["-"]);
  expect(seen("every", "sub")[1]!.request.requestSubResource).toBe("status");

  // A Scale write is reviewed as an UPDATE of "scale" whose objects are autoscaling/v1 Scales; a mutator may change it.
  const scaled = await send("PATCH", "/sub/scale", { spec: { replicas: 9 } }, "application/merge-patch+json");
  expect(((await scaled.json()) as any).spec.replicas).toBe(5);
  const scale = seen("every", "sub")[2]!;
  expect([scale.subresource, scale.request.kind, scale.object.kind, scale.object.spec?.replicas, scale.oldObject?.spec?.replicas])
    .toEqual(["scale", { group: "autoscaling", version: "v1", kind: "Scale" }, "Scale", 5, 0]);
  expect(subresources("status")).toEqual(["-", "status"]);
  expect(((await fetch(`${gadgets()}/sub`).then((r) => r.json())) as any).spec.replicas).toBe(5);
});

test("field/value: a handler runs only for objects whose field exists, equals the value or satisfies the predicate", async () => {
  expect((await send("POST", "", gadget("plain", { size: 12 }))).status).toBe(201);
  expect((await send("POST", "", gadget("loose", { size: 5, mode: "loose" }))).status).toBe(201);
  const refused = await send("POST", "", gadget("tight", { size: 5, mode: "strict" }));
  expect(refused.status).toBe(400);
  expect(((await refused.json()) as any).message).toContain("strict gadgets have at most 3 parts");
  expect((await send("POST", "", gadget("small", { size: 2, mode: "strict" }))).status).toBe(201);
  const names = (id: string) => (calls.get(id) ?? []).map((c) => c.name).filter((n) => ["plain", "loose", "tight", "small"].includes(n!));
  expect(names("has-mode")).toEqual(["loose", "tight", "small"]);
  expect(names("no-mode")).toEqual(["plain"]);
  expect(names("big")).toEqual(["plain"]);
});

test("a clientCaFile that cannot be read stops the operator with a message naming the setting", async () => {
  const settings = resolveSettings({
    fileData: { webhooks: { clientCaFile: join(dir, "missing.pem") } },
    flags: { kubeconfig: sandbox.kubeconfigPath, namespaces: ["default"], standalone: true, webhooksUrl: "https://127.0.0.1:0" },
  });
  const outcome = await run({ settings, registry: handlers(), logger: new Logger(memorySink("warn")) }).then(() => "ended", (error: Error) => error.message);
  expect(outcome).toMatch(/^cannot serve webhooks at 127\.0\.0\.1:0: cannot read webhooks\.clientCaFile: /);
});
