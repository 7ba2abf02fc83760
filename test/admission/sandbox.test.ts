// `kobun run --webhooks-url` against the sandbox: the operator serves its webhooks over HTTPS
// with a self-signed CA, registers URL-based configurations and the CRD's conversion, and the
// sandbox calls them as kube-apiserver does (AdmissionReview/ConversionReview v1, caBundle,
// failurePolicy, the JSON Patch applied).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { AdmissionError } from "../../src/declaring/kinds/webhooks.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Logger, memorySink } from "../../src/util/log.ts";
import { Toggle } from "../../src/util/toggle.ts";

const CRD = {
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "widgets.kobun.dev" },
  spec: {
    group: "kobun.dev", scope: "Namespaced", names: { plural: "widgets", singular: "widget", kind: "Widget" },
    versions: [
      { name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { size: { type: "integer" }, color: { type: "string" } } } } } } },
      { name: "v2", served: true, storage: false, schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { replicas: { type: "integer" }, color: { type: "string" } } } } } } },
    ],
  },
};

/** Releases the validator while it holds the "raced" widget's first patch (see the race test). */
const hold = { waiting: Promise.withResolvers<void>(), release: Promise.withResolvers<void>() };

function widgetHandlers(): Registry {
  const registry = new Registry();
  registry.on.validate("widgets.kobun.dev", async ({ object }) => {
    if (object.metadata.name !== "raced" || object.spec?.color !== "red" || object.spec?.size === 5) return;
    hold.waiting.resolve();
    await hold.release.promise;
  }, { id: "holder", operations: ["UPDATE"] });
  registry.on.validate("widgets.kobun.dev", ({ object }) => {
    const size = object.apiVersion === "kobun.dev/v2" ? object.spec?.replicas : object.spec?.size;
    if (!(size >= 1)) throw new AdmissionError("spec.size must be at least 1");
  }, { id: "size" });
  registry.on.mutate("widgets.kobun.dev", ({ object }) => {
    object.spec = { color: "blue", ...object.spec };
  }, { id: "defaults" });
  registry.on.convert("widgets.kobun.dev", {
    "v1->v2": ({ spec, ...rest }) => ({ ...rest, spec: { replicas: spec?.size, color: spec?.color } }),
    "v2->v1": ({ spec, ...rest }) => ({ ...rest, spec: { size: spec?.replicas, color: spec?.color } }),
  });
  return registry;
}

let sandbox: Sandbox;
const stop = new AbortController();
let operator: Promise<unknown>;
const toggle = new Toggle();
const widgets = (version: string) => `${sandbox.url}/apis/kobun.dev/${version}/namespaces/default/widgets`;
const post = (version: string, body: unknown) =>
  fetch(widgets(version), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const widget = (version: string, name: string, spec: Record<string, unknown>) => ({ apiVersion: `kobun.dev/${version}`, kind: "Widget", metadata: { name }, spec });

beforeAll(async () => {
  sandbox = await startSandbox();
  await fetch(`${sandbox.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, { method: "POST", body: JSON.stringify(CRD), headers: { "content-type": "application/json" } });
  const settings = resolveSettings({ flags: { kubeconfig: sandbox.kubeconfigPath, namespaces: ["default"], standalone: true, webhooksUrl: "https://127.0.0.1:0" } });
  const started = Promise.withResolvers<void>();
  operator = run({ signal: stop.signal, settings, registry: widgetHandlers(), toggle, logger: new Logger(memorySink("warn")), onStarted: () => started.resolve() });
  await Promise.race([started.promise, operator.then(() => { throw new Error("the operator ended before it started"); })]);
});
afterAll(async () => {
  stop.abort();
  await operator;
  await sandbox.stop();
});

test("an invalid object is refused with the validator's message, as kube-apiserver words it", async () => {
  const response = await post("v1", widget("v1", "zero", { size: 0 }));
  expect(response.status).toBe(400);
  const status = (await response.json()) as { message: string };
  expect(status.message).toBe('admission webhook "size.kobun-operator.kobun.dev" denied the request: spec.size must be at least 1');
  expect(sandbox.store.get("kobun.dev", "widgets", "default", "zero")).toBeUndefined();
});

test("a valid object is stored as the mutator defaulted it", async () => {
  const response = await post("v1", widget("v1", "small", { size: 1 }));
  expect(response.status).toBe(201);
  expect(((await response.json()) as any).spec).toEqual({ color: "blue", size: 1 });
  expect(sandbox.store.get("kobun.dev", "widgets", "default", "small").spec).toEqual({ color: "blue", size: 1 });
});

test("the conversion webhook serves v1 objects as v2 and stores v2 writes as v1", async () => {
  await post("v1", widget("v1", "old", { size: 2 }));
  const asV2 = (await (await fetch(`${widgets("v2")}/old`)).json()) as any;
  expect([asV2.apiVersion, asV2.spec]).toEqual(["kobun.dev/v2", { replicas: 2, color: "blue" }]);
  const created = await post("v2", widget("v2", "new", { replicas: 3 }));
  expect(created.status).toBe(201);
  expect(sandbox.store.get("kobun.dev", "widgets", "default", "new").spec).toEqual({ size: 3, color: "blue" });
  const list = (await (await fetch(widgets("v2"))).json()) as any;
  expect(list.items.map((w: any) => [w.metadata.name, w.spec.replicas])).toContainEqual(["old", 2]);
  const patched = await fetch(`${widgets("v2")}/new`, { method: "PATCH", headers: { "content-type": "application/merge-patch+json" }, body: JSON.stringify({ spec: { replicas: 0 } }) });
  expect(patched.status).toBe(400);
});

test("a webhook that cannot be called fails the write under failurePolicy Fail and is skipped under Ignore", async () => {
  const configuration = (name: string, failurePolicy: string, label: string) => ({
    apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingWebhookConfiguration", metadata: { name },
    webhooks: [{
      name: `${name}.example.com`, admissionReviewVersions: ["v1"], sideEffects: "None", failurePolicy, timeoutSeconds: 1,
      // port 1 on loopback: nothing listens there
      clientConfig: { url: "https://127.0.0.1:1/validate" }, objectSelector: { matchLabels: { probe: label } },
      rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] }],
    }],
  });
  for (const [name, policy] of [["strict", "Fail"], ["lenient", "Ignore"]]) {
    const r = await fetch(`${sandbox.url}/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(configuration(name!, policy!, name!)) });
    expect(r.status).toBe(201);
  }
  const configMap = (name: string, probe: string) =>
    fetch(`${sandbox.url}/api/v1/namespaces/default/configmaps`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name, labels: { probe } } }) });
  const refused = await configMap("a", "strict");
  expect(refused.status).toBe(500);
  expect(((await refused.json()) as any).message).toStartWith('Internal error occurred: failed calling webhook "strict.example.com": failed to call webhook: Post "https://127.0.0.1:1/validate"');
  expect((await configMap("b", "lenient")).status).toBe(201);
});

test("a frozen operator still answers admission (the API server calls whichever replica the Service picks)", async () => {
  toggle.freeze("test", "a peer of higher priority");
  try {
    expect(toggle.frozen).toBe(true);
    const refused = await post("v1", widget("v1", "frozen-zero", { size: 0 }));
    expect(refused.status).toBe(400);
    const allowed = await post("v1", widget("v1", "frozen-one", { size: 1 }));
    expect(((await allowed.json()) as any).spec).toEqual({ color: "blue", size: 1 });
  } finally {
    toggle.unfreeze("test");
  }
});

test("a server-side apply goes through the webhooks too (kubectl apply --server-side)", async () => {
  const apply = (name: string, spec: Record<string, unknown>) => fetch(`${widgets("v1")}/${name}?fieldManager=kubectl`, {
    method: "PATCH", headers: { "content-type": "application/apply-patch+yaml" }, body: JSON.stringify(widget("v1", name, spec)),
  });
  const refused = await apply("applied-zero", { size: 0 });
  expect(refused.status).toBe(400);
  expect(((await refused.json()) as { message: string }).message).toContain("spec.size must be at least 1");
  const created = await apply("applied-one", { size: 1 });
  expect(created.status).toBe(201);
  expect(((await created.json()) as any).spec).toEqual({ color: "blue", size: 1 });
  expect((await apply("applied-one", { size: 0 })).status).toBe(400);
});

test("a patch raced by another write while the webhooks were asked is applied again to the new object, not refused", async () => {
  expect((await post("v1", widget("v1", "raced", { size: 1 }))).status).toBe(201);
  const patch = (spec: Record<string, unknown>) => fetch(`${widgets("v1")}/raced`, {
    method: "PATCH", headers: { "content-type": "application/merge-patch+json" }, body: JSON.stringify({ spec }),
  });
  const first = patch({ color: "red" });
  await hold.waiting.promise; // the validator holds the first patch
  expect((await patch({ size: 5 })).status).toBe(200);
  hold.release.resolve();
  expect((await first).status).toBe(200);
  expect(sandbox.store.get("kobun.dev", "widgets", "default", "raced").spec).toEqual({ size: 5, color: "red" });
});

test("a watch at v2 gets the events of v1-stored objects converted by the webhook, in order", async () => {
  const abort = new AbortController();
  const response = await fetch(`${widgets("v2")}?watch=true&allowWatchBookmarks=true`, { signal: abort.signal });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const events: any[] = [];
  const until = async (done: () => boolean) => {
    const timer = setTimeout(() => abort.abort(), 5000);
    try {
      while (!done()) {
        const { value, done: ended } = await reader.read();
        if (ended) throw new Error("the watch ended");
        buffer += value;
        for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
          events.push(JSON.parse(buffer.slice(0, nl)));
          buffer = buffer.slice(nl + 1);
        }
      }
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    for (const [name, size] of [["watched-a", 7], ["watched-b", 8]] as const) await post("v1", widget("v1", name, { size }));
    await until(() => events.some((e) => e.object?.metadata?.name === "watched-b"));
    const ours = events.filter((e) => String(e.object?.metadata?.name).startsWith("watched-"));
    expect(ours.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name, e.object.spec])).toEqual([
      ["ADDED", "kobun.dev/v2", "watched-a", { replicas: 7, color: "blue" }],
      ["ADDED", "kobun.dev/v2", "watched-b", { replicas: 8, color: "blue" }],
    ]);
  } finally {
    abort.abort();
  }
});
