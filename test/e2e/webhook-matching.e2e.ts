// Which writes the API server sends to a webhook, and what it passes on of its answer, on the
// real kube-apiserver as on the sandbox: objectSelector (matchExpressions, the old object's
// labels counting on an update) and namespaceSelector (the namespace's labels; a Namespace by its
// own), matchConditions (CEL; one that cannot be evaluated refuses the write under failurePolicy
// Fail), and the webhook's warnings as `Warning: 299 - "..."` headers. The webhook is an HTTPS
// server in this process that records what it is called for.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./webhook-matching.e2e.ts

import { describe, expect, test } from "bun:test";
import { issueCertificates } from "../../src/admission/x509.ts";
import type { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { eventually, NAMESPACES, rawRequest, uniqueName } from "./harness/kube.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const CONFIGURATIONS: Resource = { group: "admissionregistration.k8s.io", version: "v1", plural: "validatingwebhookconfigurations", kind: "ValidatingWebhookConfiguration", namespaced: false, statusSubresource: false };
const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

/** An HTTPS webhook allowing everything, warning what the object's `warn` annotation says. */
async function recordingWebhook() {
  const issued = await issueCertificates(["127.0.0.1"]);
  const calls: { path: string; name: string }[] = [];
  const server = Bun.serve({
    port: 0, hostname: "127.0.0.1", tls: { cert: issued.serving.cert, key: issued.serving.key },
    async fetch(req) {
      const { request } = (await req.json()) as any;
      const object = request.object ?? request.oldObject;
      calls.push({ path: new URL(req.url).pathname, name: object?.metadata?.name });
      const warnings = object?.metadata?.annotations?.warn?.split("|");
      return Response.json({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: request.uid, allowed: true, ...(warnings ? { warnings } : {}) } });
    },
  });
  const hook = (name: string, resources: string[], selectors: Record<string, unknown>) => ({
    name: `${name}.example.com`, admissionReviewVersions: ["v1"], sideEffects: "None", failurePolicy: "Fail", timeoutSeconds: 10,
    clientConfig: { url: `https://127.0.0.1:${server.port}/${name}`, caBundle: Buffer.from(issued.ca.cert).toString("base64") },
    rules: [{ operations: ["CREATE", "UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources }], ...selectors,
  });
  return { server, calls, hook, calledFor: (path: string) => calls.filter((c) => c.path === path).map((c) => c.name) };
}

describe.each(selectedTargets())("webhook matching and warnings on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("selectors choose the writes a webhook sees, and its warnings come back as Warning headers", async () => {
    const t = need();
    const webhook = await recordingWebhook();
    const run = uniqueName("match");
    const configuration = {
      apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingWebhookConfiguration", metadata: { name: run },
      webhooks: [
        webhook.hook("warn", ["configmaps"], { objectSelector: { matchLabels: { probe: run } } }),
        webhook.hook("selective", ["configmaps"], {
          objectSelector: { matchExpressions: [{ key: "tier", operator: "In", values: ["web"] }, { key: "skip", operator: "DoesNotExist" }] },
          namespaceSelector: { matchExpressions: [{ key: "team", operator: "NotIn", values: ["b"] }], matchLabels: { run } },
        }),
        webhook.hook("conditions", ["configmaps"], { matchConditions: [
          { name: "labelled", expression: "object != null && has(object.metadata.labels) && 'cel' in object.metadata.labels" },
          { name: "agreed", expression: `object.metadata.labels['cel'] in ['yes', 'sure'] && !(request.operation == 'UPDATE') && request.namespace == '${run}-a'` },
        ] }),
        webhook.hook("broken", ["configmaps"], { objectSelector: { matchLabels: { broken: run } }, matchConditions: [{ name: "missing", expression: "object.metadata.labels.missing == 'x'" }] }),
        webhook.hook("namespaces", ["namespaces"], { namespaceSelector: { matchLabels: { run, team: "a" } } }),
      ],
    };
    const [nsA, nsB] = [`${run}-a`, `${run}-b`];
    try {
      await t.client.create(CONFIGURATIONS, null, configuration);
      // The API server loads a new configuration a moment after it is written.
      const warned = await eventually("the webhook's warnings in the response", async () => {
        const annotations = { warn: 'first|say "hi" \\ back|first' };
        const response = await rawRequest(t.client, "POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: uniqueName("warned"), labels: { probe: run }, annotations } });
        expect(response.status).toBe(201);
        return response.headers.get("warning") ?? undefined;
      }, { timeoutMs: 20_000, intervalMs: 100 });
      expect(warned).toBe('299 - "first", 299 - "say \\"hi\\" \\\\ back"');

      await t.client.create(NAMESPACES, null, { metadata: { name: nsA, labels: { run, team: "a" } } });
      await t.client.create(NAMESPACES, null, { metadata: { name: nsB, labels: { run, team: "b" } } });
      await t.client.create(NAMESPACES, null, { metadata: { name: `${run}-c`, labels: { run, team: "c" } } });
      expect(webhook.calledFor("/namespaces")).toEqual([nsA]);

      const create = (ns: string, name: string, labels: Record<string, string>) => t.client.create(CONFIGMAPS, ns, { metadata: { name, labels } });
      await create(nsA, "web", { tier: "web" });
      await create(nsA, "db", { tier: "db" });
      await create(nsA, "skipped", { tier: "web", skip: "" });
      await create(nsB, "web-b", { tier: "web" });
      await create("default", "web-default", { tier: "web" });
      await t.client.patch(CONFIGMAPS, nsA, "web", { metadata: { labels: { tier: null } } }, { type: "merge" });
      expect(webhook.calledFor("/selective")).toEqual(["web", "web"]);

      for (const [name, cel] of [["cel-yes", "yes"], ["cel-sure", "sure"], ["cel-no", "no"]]) await create(nsA, name!, { cel: cel! });
      await create(nsB, "cel-elsewhere", { cel: "yes" });
      await t.client.patch(CONFIGMAPS, nsA, "cel-yes", { data: { a: "b" } }, { type: "merge" });
      expect(webhook.calledFor("/conditions")).toEqual(["cel-yes", "cel-sure"]);
      const refused = await create(nsA, "broken", { broken: run }).then(() => "created", (error: Error) => error.message);
      expect(refused).toEndWith(`403 Forbidden: configmaps "broken" is forbidden: expression 'object.metadata.labels.missing == 'x'' resulted in error: no such key: missing`);
      expect(webhook.calledFor("/broken")).toEqual([]);
    } finally {
      await t.client.delete(CONFIGURATIONS, null, run).catch(() => {});
      webhook.server.stop(true);
    }
  }, 60_000);
});
