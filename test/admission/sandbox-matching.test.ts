// The sandbox chooses the webhooks a write is sent to as kube-apiserver does (objectSelector
// with matchExpressions, namespaceSelector against the namespace's labels), and passes on what
// they warn as Warning headers. The webhook here is a plain HTTPS server that records its calls.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { issueCertificates } from "../../src/admission/x509.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";

let sandbox: Sandbox;
let webhook: ReturnType<typeof Bun.serve>;
/** The paths called, with the name of the object each call was about. */
const calls: { path: string; name: string }[] = [];

const json = { "content-type": "application/json" };
const send = (method: string, path: string, body?: unknown) =>
  fetch(`${sandbox.url}${path}`, { method, headers: method === "PATCH" ? { "content-type": "application/merge-patch+json" } : json, body: body === undefined ? undefined : JSON.stringify(body) });

beforeAll(async () => {
  const issued = await issueCertificates(["127.0.0.1"]);
  webhook = Bun.serve({
    port: 0, hostname: "127.0.0.1", tls: { cert: issued.serving.cert, key: issued.serving.key },
    async fetch(req) {
      const { request } = (await req.json()) as any;
      const object = request.object ?? request.oldObject;
      calls.push({ path: new URL(req.url).pathname, name: object?.metadata?.name });
      const warnings = object?.metadata?.annotations?.warn?.split("|");
      const allowed = object?.metadata?.labels?.deny !== "yes";
      return Response.json({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: request.uid, allowed, ...(warnings ? { warnings } : {}) } });
    },
  });
  sandbox = await startSandbox();
  const hook = (name: string, resources: string[], selectors: Record<string, unknown>, apiGroups = [""]) => ({
    name: `${name}.example.com`, admissionReviewVersions: ["v1"], sideEffects: "None", failurePolicy: "Fail", timeoutSeconds: 5,
    clientConfig: { url: `https://127.0.0.1:${webhook.port}/${name}`, caBundle: Buffer.from(issued.ca.cert).toString("base64") },
    rules: [{ operations: ["CREATE", "UPDATE", "DELETE"], apiGroups, apiVersions: ["v1"], resources }], ...selectors,
  });
  const configuration = {
    apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingWebhookConfiguration", metadata: { name: "matching" },
    webhooks: [
      hook("warn", ["configmaps"], { objectSelector: { matchLabels: { probe: "warn" } } }),
      hook("selective", ["configmaps"], {
        objectSelector: { matchExpressions: [{ key: "tier", operator: "In", values: ["web"] }, { key: "skip", operator: "DoesNotExist" }] },
        namespaceSelector: { matchExpressions: [{ key: "team", operator: "NotIn", values: ["b"] }], matchLabels: { watched: "yes" } },
      }),
      hook("conditions", ["configmaps"], { matchConditions: [
        { name: "labelled", expression: "object != null && has(object.metadata.labels) && 'cel' in object.metadata.labels" },
        { name: "agreed", expression: "object.metadata.labels['cel'] in ['yes', 'sure'] && !(request.operation == 'UPDATE') && request.namespace == 'default'" },
      ] }),
      hook("broken", ["configmaps"], { objectSelector: { matchLabels: { probe: "broken" } }, matchConditions: [{ name: "missing", expression: "object.metadata.labels.missing == 'x'" }] }),
      { ...hook("lenient", ["configmaps"], { objectSelector: { matchLabels: { probe: "lenient" } }, matchConditions: [{ name: "unsupported", expression: "object.metadata.name.startsWith('a')" }] }), failurePolicy: "Ignore" },
      hook("namespaces", ["namespaces", "clusterroles"], { namespaceSelector: { matchLabels: { team: "a" } } }, ["", "rbac.authorization.k8s.io"]),
    ],
  };
  expect((await send("POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", configuration)).status).toBe(201);
});
afterAll(async () => {
  await sandbox.stop();
  webhook.stop(true);
});

const configMap = (name: string, labels: Record<string, string>, annotations: Record<string, string> = {}) => ({ metadata: { name, labels, annotations } });
const calledFor = (path: string) => calls.filter((c) => c.path === path).map((c) => c.name);

test("a webhook's warnings reach the client as kube-apiserver's Warning headers, on an allowed write and on a denial", async () => {
  const allowed = await send("POST", "/api/v1/namespaces/default/configmaps", configMap("warned", { probe: "warn" }, { warn: 'first|say "hi" \\ back|first' }));
  expect(allowed.status).toBe(201);
  // repeated texts once, `"` and `\` escaped (net.NewWarningHeader)
  expect(allowed.headers.get("warning")).toBe('299 - "first", 299 - "say \\"hi\\" \\\\ back"');
  const denied = await send("POST", "/api/v1/namespaces/default/configmaps", configMap("refused", { probe: "warn", deny: "yes" }, { warn: "still said" }));
  expect(denied.status).toBe(400);
  expect(denied.headers.get("warning")).toBe('299 - "still said"');
  expect((await send("POST", "/api/v1/namespaces/default/configmaps", configMap("quiet", { probe: "warn" }))).headers.get("warning")).toBeNull();
});

test("objectSelector and namespaceSelector (matchLabels and matchExpressions) choose which writes a webhook is called for", async () => {
  for (const [name, labels] of [["watched-a", { watched: "yes", team: "a" }], ["watched-b", { watched: "yes", team: "b" }], ["unwatched", {}]] as const) {
    expect((await send("POST", "/api/v1/namespaces", { metadata: { name, labels } })).status).toBe(201);
  }
  const create = (ns: string, name: string, labels: Record<string, string>) => send("POST", `/api/v1/namespaces/${ns}/configmaps`, configMap(name, labels));
  expect((await create("watched-a", "web", { tier: "web" })).status).toBe(201);
  expect((await create("watched-a", "db", { tier: "db" })).status).toBe(201);
  expect((await create("watched-a", "skipped", { tier: "web", skip: "" })).status).toBe(201);
  expect((await create("watched-b", "web-b", { tier: "web" })).status).toBe(201);
  expect((await create("unwatched", "web-u", { tier: "web" })).status).toBe(201);
  expect((await create("watched-a", "gone", { tier: "web" })).status).toBe(201);
  // the old object's labels count too: an update that drops the label is still seen, and a delete
  expect((await send("PATCH", "/api/v1/namespaces/watched-a/configmaps/web", { metadata: { labels: { tier: null } } })).status).toBe(200);
  expect((await send("DELETE", "/api/v1/namespaces/watched-a/configmaps/gone")).status).toBe(200);
  expect(calledFor("/selective")).toEqual(["web", "gone", "web", "gone"]);
});

test("a Namespace is judged by its own labels, and another cluster-scoped object passes any namespaceSelector", async () => {
  expect((await send("POST", "/api/v1/namespaces", { metadata: { name: "ns-team-a", labels: { team: "a" } } })).status).toBe(201);
  expect((await send("POST", "/api/v1/namespaces", { metadata: { name: "ns-team-c", labels: { team: "c" } } })).status).toBe(201);
  const role = { metadata: { name: "role-one" }, rules: [] };
  expect((await send("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)).status).toBe(201);
  expect(calledFor("/namespaces").filter((n) => n !== "watched-a")).toEqual(["ns-team-a", "role-one"]);
});

test("matchConditions (CEL over object, oldObject and request) skip the webhook when one is false", async () => {
  for (const [name, cel] of [["cel-yes", "yes"], ["cel-sure", "sure"], ["cel-no", "no"]]) {
    expect((await send("POST", "/api/v1/namespaces/default/configmaps", configMap(name!, { cel: cel! }))).status).toBe(201);
  }
  expect((await send("POST", "/api/v1/namespaces/kube-system/configmaps", configMap("cel-elsewhere", { cel: "yes" }))).status).toBe(201);
  expect((await send("PATCH", "/api/v1/namespaces/default/configmaps/cel-yes", { data: { a: "b" } })).status).toBe(200);
  expect((await send("DELETE", "/api/v1/namespaces/default/configmaps/cel-yes")).status).toBe(200);
  expect(calledFor("/conditions")).toEqual(["cel-yes", "cel-sure"]);
});

test("a matchCondition that cannot be evaluated fails the write under failurePolicy Fail and skips the webhook under Ignore", async () => {
  const refused = await send("POST", "/api/v1/namespaces/default/configmaps", configMap("broken", { probe: "broken" }));
  expect(refused.status).toBe(403);
  // as kube-apiserver words it (test/e2e/webhook-matching.e2e.ts checks it on the real one)
  expect(((await refused.json()) as any).message).toBe(`configmaps "broken" is forbidden: expression 'object.metadata.labels.missing == 'x'' resulted in error: no such key: missing`);
  expect((await send("POST", "/api/v1/namespaces/default/configmaps", configMap("lenient", { probe: "lenient" }))).status).toBe(201);
  expect([calledFor("/broken"), calledFor("/lenient")]).toEqual([[], []]);
});
