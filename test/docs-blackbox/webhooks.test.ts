// docs/webhooks.md, README "Webhooks", api.md's Admission*/Convert*: what on.validate/mutate/convert register and
// answer (reviews POSTed to the operator's 127.0.0.1 server trusting only its caBundle, and via the sandbox): errors,
// bad bodies, patches, filters, dryRun, timeouts, conversion both ways, `kobun manifests`.

import { expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Type from "typebox";
import { parseAllDocuments } from "yaml";
import { AdmissionError, defineResource, Registry, type AdmissionContext, type JsonPatchOperation } from "kobun";
import { startOperator } from "kobun/testing";
import { root, scratchDir, within } from "./helpers.ts";

type Kit = Awaited<ReturnType<typeof startOperator>>;
const OP = "kobun-operator";
const CM = { kind: { group: "", version: "v1", kind: "ConfigMap" },
  resource: { group: "", version: "v1", resource: "configmaps" } };
const cm = (data?: Record<string, string>) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" }, data });

// testing.md: the kit serves the webhooks a registry has, as `kobun dev` does, with no flag.
const start = (registry: Registry) => startOperator({ registry, logLevel: "silent", timeout: 10_000 });

/** A request to the sandbox API server, as kubectl makes it; with the Warning header it answers. */
async function kube(kit: Kit, method: string, path: string, body?: unknown) {
  const r = await fetch(kit.sandbox.url + path,
    { method, headers: { "content-type": "application/json" }, body: body ? JSON.stringify(body) : undefined });
  return { status: r.status, warning: r.headers.get("warning") ?? "", body: await r.json() as any };
}
const create = (kit: Kit, o: unknown, q = "") => kube(kit, "POST", `/api/v1/namespaces/default/configmaps${q}`, o);

/** The webhook kobun registered in the sandbox under `<id>.kobun-operator.kobun.dev`. */
async function hook(kit: Kit, kind: "validating" | "mutating", id: string) {
  const { body } = await kube(kit, "GET", `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/${OP}`);
  return (body.webhooks as any[]).find((w) => w.name === `${id}.${OP}.kobun.dev`);
}

/** POSTs to the operator's webhook server at a configuration's URL (or `path`), trusting only its caBundle. */
async function post(clientConfig: { url: string; caBundle: string }, body: unknown, path?: string) {
  const url = path ? new URL(path, clientConfig.url).href : clientConfig.url;
  const r = await within(fetch(url, {
    method: "POST", headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    tls: { ca: Buffer.from(clientConfig.caBundle, "base64").toString() },
  }), 8_000, `POST ${url}`);
  const text = await r.text(), json = /^\{/.test(text) ? JSON.parse(text) : undefined;
  return { status: r.status, text, json, response: json?.response };
}

const review = (request: Record<string, unknown>) => ({
  apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
  request: { uid: crypto.randomUUID(), ...CM, namespace: "default", name: "x", operation: "CREATE",
    userInfo: { username: "alice", groups: ["devs"] }, ...request },
});
const decode = (patch: string) => JSON.parse(Buffer.from(patch, "base64").toString()) as JsonPatchOperation[];

function applyPatch(doc: any, ops: JsonPatchOperation[]) {            // RFC 6902 on objects: enough here
  const out = structuredClone(doc);
  for (const { op, path, value } of ops) {
    const keys = path.split("/").slice(1).map((k) => k.replaceAll("~1", "/").replaceAll("~0", "~"));
    const [parent, last] = [keys.slice(0, -1).reduce((o, k) => o[k], out), keys.at(-1)!];
    if (op === "remove") delete parent[last]; else parent[last] = value;
  }
  return out;
}

test("on.validate registers '<id>.<name>.kobun.dev' at /validate/<id>, with the documented defaults", async () => {
  const registry = new Registry();
  registry.on.validate("v1/configmaps", () => {}, { id: "size" });
  registry.on.validate("v1/configmaps", function validate_size() {});
  registry.on.validate("v1/configmaps", () => {}, {
    id: "audit", operations: ["DELETE"], failurePolicy: "Ignore", sideEffects: "NoneOnDryRun", timeoutSeconds: 5,
    labels: { team: "a" }, subresources: ["status"], matchConditions: [{ name: "m", expression: "true" }],
  });
  await using kit = await start(registry);
  const size = await hook(kit, "validating", "size");
  expect(new URL(size.clientConfig.url).pathname).toBe("/validate/size");
  expect(size).toMatchObject({ failurePolicy: "Fail", sideEffects: "None", timeoutSeconds: 10,
    rules: [{ operations: ["CREATE", "UPDATE"], resources: ["configmaps"] }] });
  expect(new URL((await hook(kit, "validating", "validate-size")).clientConfig.url).pathname)
    .toBe("/validate/validate-size");
  const audit = await hook(kit, "validating", "audit");
  expect(audit).toMatchObject({ failurePolicy: "Ignore", sideEffects: "NoneOnDryRun", timeoutSeconds: 5,
    objectSelector: { matchLabels: { team: "a" } }, matchConditions: [{ name: "m", expression: "true" }] });
  expect([audit.rules[0].operations, [...audit.rules[0].resources].sort()])
    .toEqual([["DELETE"], ["configmaps", "configmaps/status"]]);
}, 30_000);

test("via the sandbox an AdmissionError refuses with kubectl's message and code; warnings are 299s", async () => {
  const registry = new Registry();
  registry.on.validate("v1/configmaps", ({ object, warnings }) => {
    const size = Number((object as any).data?.size);
    if (!(size >= 1)) throw new AdmissionError("spec.size must be at least 1", { code: 422, warnings: ["too small"] });
    if (size > 100) warnings.push("spec.size above 100 is slow");
  }, { id: "size" });
  await using kit = await start(registry);
  const bad = await create(kit, { ...cm({ size: "0" }), metadata: { name: "bad" } });
  expect([bad.status, bad.warning]).toEqual([422, expect.stringContaining('299 - "too small"')]);
  expect(bad.body.message)
    .toBe(`admission webhook "size.${OP}.kobun.dev" denied the request: spec.size must be at least 1`);
  expect(await kit.get("v1/configmaps", "bad")).toBeUndefined();
  const big = await create(kit, { ...cm({ size: "500" }), metadata: { name: "big" } });
  expect([big.status, big.warning]).toEqual([201, expect.stringContaining('299 - "spec.size above 100 is slow"')]);
}, 30_000);

test("a review POSTed: uid, allowed, code (400 by default), message, warnings; other errors; filters", async () => {
  const registry = new Registry();
  const seen: AdmissionContext[] = [];
  const called: string[] = [];
  registry.on.validate("v1/configmaps", ({ object, oldObject, operation }) => {
    called.push(`${operation}:${((object ?? oldObject) as any).data.size}`);
    throw new AdmissionError("too big");
  }, { id: "big", field: "data.size", value: (size) => Number(size) > 10, operations: ["CREATE", "DELETE"] });
  registry.on.validate("v1/configmaps", (ctx) => {
    seen.push(ctx);
    const mode = (ctx.object as any).data?.mode;
    if (mode === "plain") throw new AdmissionError("plain refusal");
    if (mode === "coded") throw new AdmissionError("forbidden here", { code: 403, warnings: ["w1", "w2"] });
    if (mode === "crash") throw new TypeError("password hunter2 refused");
    ctx.warnings.push("allowed, but noted");
  }, { id: "size" });
  await using kit = await start(registry);
  const { clientConfig } = await hook(kit, "validating", "size");
  const send = (mode: string) => post(clientConfig, review({ object: cm({ mode }) }));
  expect((await send("plain")).json).toMatchObject({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    response: { uid: seen[0]!.request.uid, allowed: false, status: { code: 400, message: "plain refusal" } } });
  expect((await send("coded")).response).toMatchObject({ allowed: false,
    status: { code: 403, message: "forbidden here" }, warnings: ["w1", "w2"] });
  expect((await send("fine")).response).toMatchObject({ allowed: true, warnings: ["allowed, but noted"] });
  expect(seen[0]).toMatchObject({ name: "x", namespace: "default", operation: "CREATE",
    userInfo: { username: "alice", groups: ["devs"] }, peer: null, subresource: undefined });
  const crash = await send("crash");                              // never an HTTP 500; the error only in the log
  expect([crash.status, crash.response.allowed, crash.text.includes("hunter2")]).toEqual([200, false, false]);
  expect(crash.response.status.message).toBe("admission handler size failed; the operator's log has the details");
  expect(await kit.logs.until(/hunter2/)).toContain("hunter2");
  const big = (await hook(kit, "validating", "big")).clientConfig;      // field/value, subresources: kobun's filters
  const allowed: boolean[] = [];
  for (const request of [{ object: cm({ other: "1" }) }, { object: cm({ size: "5" }) },
    { object: cm({ size: "50" }), subResource: "status" }, { object: cm({ size: "50" }) },
    { operation: "DELETE", object: null, oldObject: cm({ size: "60" }) }]) {
    allowed.push((await post(big, review(request))).response.allowed);
  }
  expect([allowed, called]).toEqual([[true, true, true, false, false], ["CREATE:50", "DELETE:60"]]);
}, 30_000);

test("a body that is not a review v1 gets HTTP 400 saying what was wrong, on every path", async () => {
  const registry = new Registry();
  let calls = 0;
  registry.on.validate("v1/configmaps", () => { calls++; }, { id: "size" });
  registry.on.mutate("v1/configmaps", () => { calls++; }, { id: "defaults" });
  await using kit = await start(registry);
  const { clientConfig } = await hook(kit, "validating", "size");
  const mutatePath = new URL((await hook(kit, "mutating", "defaults")).clientConfig.url).pathname;
  const v1beta1 = { ...review({}), apiVersion: "admission.k8s.io/v1beta1" }, N = 10_001;
  const deep = JSON.stringify(review({})).replace(/"request":.*}$/, `"request":${"[".repeat(N)}${"]".repeat(N)}}`);
  for (const path of ["/validate/size", mutatePath]) {
    for (const [body, why] of [["{not json", /json/i], [v1beta1, /v1beta1|version/i], [deep, /deep|nest|level/i]]) {
      const answer = await post(clientConfig, body, path);
      expect([path, answer.status, answer.text]).toEqual([path, 400, expect.stringMatching(why as RegExp)]);
    }
  }
  expect(calls).toBe(0);
}, 30_000);

test("on.mutate: a change in place is answered as a base64 JSONPatch; a returned patch as it is", async () => {
  const registry = new Registry();
  registry.on.mutate("v1/configmaps", ({ object: o }: { object: any }) => {
    if (o.data?.own) return [{ op: "add", path: "/metadata/labels", value: { own: "yes" } }];
    o.data = { size: "1", ...o.data };
    delete o.data.drop;
  }, { id: "defaults" });
  await using kit = await start(registry);
  const { clientConfig } = await hook(kit, "mutating", "defaults");
  const object = cm({ keep: "k", drop: "d" });
  const { response } = await post(clientConfig, review({ object }));
  expect(response).toMatchObject({ allowed: true, patchType: "JSONPatch" });
  expect(applyPatch(object, decode(response.patch))).toEqual({ ...object, data: { keep: "k", size: "1" } });
  const own = await post(clientConfig, review({ object: cm({ own: "1" }) }));
  expect(decode(own.response.patch)).toEqual([{ op: "add", path: "/metadata/labels", value: { own: "yes" } }]);
  const stored = await kit.apply("v1/configmaps", { metadata: { name: "via-sandbox" }, data: { keep: "k" } });
  expect(stored.data).toEqual({ keep: "k", size: "1" });      // the sandbox applied the patch
}, 30_000);

test("via the sandbox: operations, oldObject, options, DELETE's old object; a dry run and its headers", async () => {
  const registry = new Registry();
  const mutated: string[] = [];
  const seen: any[] = [];
  registry.on.mutate("v1/configmaps", ({ operation }) => { mutated.push(operation); },
    { id: "defaults", operations: ["CREATE"] });
  registry.on.validate("v1/configmaps", (ctx) => { seen.push({ ...ctx, data: (ctx.object as any).data }); },
    { id: "check", operations: ["CREATE", "UPDATE", "DELETE"], sideEffects: "NoneOnDryRun" });
  await using kit = await start(registry);
  await kit.apply("v1/configmaps", { metadata: { name: "c" }, data: { v: "1" } });
  await kit.apply("v1/configmaps", { metadata: { name: "c" }, data: { v: "2" } });      // a patch: UpdateOptions
  expect((await kube(kit, "DELETE", "/api/v1/namespaces/default/configmaps/c")).status).toBe(200);
  const dry = await create(kit, { ...cm(), metadata: { generateName: "dry-" } }, "?dryRun=All&fieldManager=me");
  expect(dry.status).toBe(201);
  expect(await kit.get("v1/configmaps", dry.body.metadata.name)).toBeUndefined();
  expect(mutated).toEqual(["CREATE", "CREATE"]);
  expect(seen.map((s) => [s.operation, s.data, s.oldObject?.data, s.request.options?.kind, s.dryRun])).toEqual([
    ["CREATE", { v: "1" }, undefined, "CreateOptions", false],
    ["UPDATE", { v: "2" }, { v: "1" }, "UpdateOptions", false],
    ["DELETE", { v: "2" }, { v: "2" }, "DeleteOptions", false],
    ["CREATE", undefined, undefined, "CreateOptions", true]]);
  expect(seen[0].userInfo).toEqual({ username: expect.any(String), groups: expect.any(Array) });   // no uid here
  expect(seen[3]).toMatchObject({ peer: null, name: dry.body.metadata.name,                        // generateName made
    request: { options: { dryRun: ["All"], fieldManager: "me" } },
    headers: { "content-type": "application/json", "accept": "application/json, */*",
      "accept-encoding": "gzip", "user-agent": "kube-apiserver-admission" } });
}, 30_000);

test("timeoutSeconds: a handler is cut (signal aborts): refused under Fail, allowed, warned under Ignore", async () => {
  const registry = new Registry();
  const aborted: string[] = [];
  const slow = (id: string) => async ({ signal }: AdmissionContext) => {
    await new Promise((resolve) => { signal.onabort = resolve; AbortSignal.timeout(8_000).onabort = resolve; });
    if (signal.aborted) aborted.push(id);
  };
  registry.on.validate("v1/configmaps", slow("strict"), { id: "strict", timeoutSeconds: 1 });
  registry.on.validate("v1/configmaps", slow("lax"), { id: "lax", timeoutSeconds: 1, failurePolicy: "Ignore" });
  await using kit = await start(registry);
  const hooks = [await hook(kit, "validating", "strict"), await hook(kit, "validating", "lax")];
  const started = performance.now();
  const [strict, lax] = await Promise.all(hooks.map((h) => post(h.clientConfig, review({ object: cm() }))));
  expect(performance.now() - started).toBeLessThan(1_000);    // README: before the API server gives up (1 s)
  expect(strict!.response.allowed).toBe(false);
  expect(lax!.response).toMatchObject({ allowed: true, warnings: [expect.any(String)] });
  expect(aborted.sort()).toEqual(["lax", "strict"]);
}, 30_000);

test("on.convert with a table: the sandbox serves either version; a ConversionReview is answered", async () => {
  const Widgets = defineResource({ group: "blackbox.kobun.dev", kind: "Widget", plural: "widgets", versions: {
    v1: { schema: { spec: Type.Object({ size: Type.Optional(Type.Integer()) }) }, storage: true },
    v2: { schema: { spec: Type.Object({ replicas: Type.Optional(Type.Integer()) }) } },
  } });
  const registry = new Registry();
  registry.on.validate(Widgets, () => {}, { id: "widgets" });       // so that the kit installs the CRD
  registry.on.convert("widgets.blackbox.kobun.dev", {
    "v1->v2": ({ spec, ...o }) => ({ ...o, spec: { replicas: (spec as any)?.size } }),
    "v2->v1": ({ spec, ...o }) => ({ ...o, spec: { size: (spec as any)?.replicas } }),
  });
  await using kit = await start(registry);
  const stored = await kit.apply(Widgets, { metadata: { name: "w" }, spec: { size: 3 } });
  const v2 = "/apis/blackbox.kobun.dev/v2/namespaces/default/widgets";
  const list = (await kube(kit, "GET", v2)).body.items.map((o: any) => [o.apiVersion, o.spec]);
  expect(list).toEqual([["blackbox.kobun.dev/v2", { replicas: 3 }]]);
  const made = await kube(kit, "POST", v2,
    { apiVersion: "blackbox.kobun.dev/v2", kind: "Widget", metadata: { name: "w2" }, spec: { replicas: 5 } });
  expect(made.status).toBe(201);
  expect((await kit.get(Widgets, "w2"))?.spec).toEqual({ size: 5 });
  const { body: crd } = await kube(kit, "GET",
    `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${Widgets.crd.metadata.name}`);
  expect(crd.spec.conversion.strategy).toBe("Webhook");
  const uid = crypto.randomUUID();
  const { response } = await post(crd.spec.conversion.webhook.clientConfig, {
    kind: "ConversionReview", apiVersion: "apiextensions.k8s.io/v1",
    request: { uid, desiredAPIVersion: "blackbox.kobun.dev/v2", objects: [stored] } });
  expect(response).toMatchObject({ uid, result: { status: "Success" } });
  expect(response.convertedObjects.map((o: any) => [o.apiVersion, o.spec, o.metadata.name]))
    .toEqual([["blackbox.kobun.dev/v2", { replicas: 3 }, "w"]]);
  // "another fails the conversion, naming those it has": in the answer, which kubectl shows, not only in the log.
  const { response: missing } = await post(crd.spec.conversion.webhook.clientConfig, {
    kind: "ConversionReview", apiVersion: "apiextensions.k8s.io/v1",
    request: { uid, desiredAPIVersion: "blackbox.kobun.dev/v3", objects: [stored] } });
  expect(missing).toEqual({ uid, convertedObjects: [], result: { status: "Failure",
    message: "no conversion v1->v3 for widgets.blackbox.kobun.dev (on.convert has v1->v2, v2->v1)" } });
}, 30_000);

test("kobun manifests: a Service 443 → 9443, both configurations, the CRD's conversion, the flag, RBAC", async () => {
  const dir = scratchDir();
  try {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "hooks-op", version: "1.0.0" }));
    mkdirSync(join(dir, "handlers"));
    writeFileSync(join(dir, "handlers", "a.ts"), `import { defineResource, on } from "kobun";
import Type from "typebox";
const W = defineResource({ group: "blackbox.kobun.dev", kind: "Gadget", plural: "gadgets", versions: {
v1: { schema: { spec: Type.Object({}) }, storage: true }, v2: { schema: { spec: Type.Object({}) } } } });
on.validate(W, () => {}, { id: "size" }); on.mutate(W, () => {}, { id: "defaults" });
on.convert("gadgets.blackbox.kobun.dev", (o, to) => ({ ...o, apiVersion: to }));\n`);
    const child = Bun.spawn([process.execPath, join(root, "src", "cli.ts"), "manifests", "-n", "default",
      "--operator-namespace", "ops"], { cwd: dir, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await within(Promise.all([new Response(child.stdout).text(),
      new Response(child.stderr).text(), child.exited]), 25_000, "kobun manifests");
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    const objects = parseAllDocuments(stdout).map((d) => d.toJS()).filter(Boolean) as any[];
    const one = (k: string) => objects.find((o) => o.kind === k), service = { name: "hooks-op", namespace: "ops" };
    expect([one("Service")?.metadata, one("Service")?.spec.ports[0]])
      .toMatchObject([service, { port: 443, targetPort: 9443 }]);
    const [validating, mutating] = ["Validating", "Mutating"].map((kind) => one(`${kind}WebhookConfiguration`));
    expect(validating).toMatchObject({ metadata: { name: "hooks-op" }, webhooks: [{ name: "size.hooks-op.kobun.dev",
      clientConfig: { service: { ...service, path: "/validate/size" } } }] });
    expect(mutating).toMatchObject({ metadata: { name: "hooks-op" },
      webhooks: [{ name: "defaults.hooks-op.kobun.dev", clientConfig: { service } }] });
    const crd = objects.find((o) => o.metadata?.name === "gadgets.blackbox.kobun.dev");
    expect(crd.spec.conversion).toMatchObject({ strategy: "Webhook", webhook: { clientConfig: { service } } });
    expect(one("Deployment").spec.template.spec.containers[0].args).toContain("--webhooks-listen=0.0.0.0:9443");
    const rules = objects.filter((o) => /Role$/.test(o.kind)).flatMap((r) => r.rules ?? []);
    const grant = (resource: string) => rules.filter((r: any) => r.resources.includes(resource) &&
      r.resourceNames).map((r: any) => [[...r.verbs].sort(), r.resourceNames]);
    expect(["validatingwebhookconfigurations", "mutatingwebhookconfigurations", "customresourcedefinitions"]
      .map(grant)).toEqual([[[["get", "update"], ["hooks-op"]]], [[["get", "update"], ["hooks-op"]]],
      [[["get", "patch"], ["gadgets.blackbox.kobun.dev"]]]]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
