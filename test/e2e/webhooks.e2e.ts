// Admission and conversion webhooks served by the binary, called by the API server over HTTPS
// with the self-signed caBundle kobun registered (`kobun run --webhooks-url`), on the real
// kube-apiserver as on the sandbox: an invalid object refused with the handler's message, a
// valid one defaulted, a two-version CRD converted v1 ↔ v2, and a new certificate (a new CA,
// the API server not restarted) keeping admission working. And what a handler learns of its call
// (in-process operator): the review's HTTP headers, ctx.dryRun and the write's `options` for
// creates, patches and deletes, a generateName already made into the review's name, and a
// status write reaching a handler registered with subresources ["*"], a Deployment's /scale write
// reviewed as an autoscaling/v1 Scale.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./webhooks.e2e.ts
//
// Needs dist/kobun-e2e (`bun run build.ts --handlers test/e2e/handlers --outfile dist/kobun-e2e`).

import { describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { join } from "node:path";
import { Registry } from "../../src/declaring/registry.ts";
import type { AdmissionContext } from "../../src/declaring/kinds/webhooks.ts";
import type { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { createNamespace, eventually, FLAKY_STATUSES, rawRequest, uniqueName } from "./harness/kube.ts";
import { startWebhookOperator, untilCalled } from "./harness/webhook-operator.ts";
import { KOBUN_E2E, ROOT, startOperator, type Operator } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const widgets = (version: string): Resource =>
  ({ group: "e2e.kobun.dev", version, plural: "kobunwidgets", kind: "KobunWidget", namespaced: true, statusSubresource: false });
const DEPLOYMENTS: Resource = { group: "apps", version: "v1", plural: "deployments", kind: "Deployment", namespaced: true, statusSubresource: true };
const configurations = (plural: string): Resource =>
  ({ group: "admissionregistration.k8s.io", version: "v1", plural, kind: "", namespaced: false, statusSubresource: false });

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const widget = (version: string, name: string, spec: Record<string, unknown>) =>
  ({ apiVersion: `e2e.kobun.dev/${version}`, kind: "KobunWidget", metadata: { name }, spec });

/**
 * The API server picks up a new webhook configuration (or caBundle) a moment after it is
 * written: try with fresh objects until the invalid one is refused and the valid one defaulted.
 */
async function admissionWorks(client: KubeClient, ns: string, webhook: string, op: Operator): Promise<void> {
  const refusal = await eventually("the invalid widget refused by the webhook", async () => {
    const name = uniqueName("bad");
    try {
      await client.create(widgets("v1"), ns, widget("v1", name, { size: 0 }));
    } catch (error) {
      const message = (error as Error).message;
      return message.includes(`admission webhook "${webhook}" denied the request`) ? message : undefined;
    }
    await client.delete(widgets("v1"), ns, name).catch(() => {});
    return undefined;
  }, { timeoutMs: 20_000, intervalMs: 100 }).catch((e: Error) => { throw new Error(`${e.message}\n${op.tail()}`); });
  expect(refusal).toContain("spec.size must be an integer of at least 1, got 0");
  const defaulted = await eventually("a valid widget defaulted by the webhook", async () => {
    const created = await client.create(widgets("v1"), ns, widget("v1", uniqueName("good"), { size: 2 }));
    return created.spec?.color === "blue" ? created : undefined;
  }, { timeoutMs: 20_000, intervalMs: 100 });
  expect(defaulted.spec).toEqual({ size: 2, color: "blue" });
}

describe.each(selectedTargets())("webhooks served by the binary, called by %s", (targetName: TargetName) => {
  const crds = ["kobunflaky.crd.yaml", "kobunwidget.crd.yaml"].map((f) => join(ROOT, "test/e2e/handlers", f));
  const need = targetSuite(targetName, { crds, cleanup: [] });

  test("invalid refused with the handler's message, valid defaulted, v1 ↔ v2 converted, and a new CA keeps admission working", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-webhooks");
    const name = uniqueName("wh");
    const url = `https://127.0.0.1:${await freePort()}`;
    const args = ["--standalone", "-n", ns, "--webhooks-url", url, "--webhooks-name", name];
    let op = startOperator("webhooks", t.kubeconfigPath, args, KOBUN_E2E);
    try {
      await op.waitForLog(/conversion webhook registered/, 20_000).catch((e: Error) => { throw new Error(`${e.message}\n${op.tail()}`); });
      await admissionWorks(t.client, ns, `widget-size.${name}.kobun.dev`, op);

      await t.client.create(widgets("v1"), ns, widget("v1", "stored-as-v1", { size: 3 }));
      const asV2 = await eventually("v1 object served as v2", async () => {
        const got = await t.client.get(widgets("v2"), ns, "stored-as-v1");
        return got.spec?.replicas === 3 ? got : undefined;
      }, { timeoutMs: 20_000, intervalMs: 100 });
      expect([asV2.apiVersion, asV2.spec]).toEqual(["e2e.kobun.dev/v2", { replicas: 3, color: "blue" }]);
      await t.client.create(widgets("v2"), ns, widget("v2", "written-as-v2", { replicas: 4 }));
      expect((await t.client.get(widgets("v1"), ns, "written-as-v2")).spec).toEqual({ size: 4, color: "blue" });

      // A new operator process makes a new CA and serving certificate on the same address and
      // patches the caBundle; the API server (not restarted) must trust the new one.
      const before = await t.client.get(configurations("validatingwebhookconfigurations"), null, name);
      await op.stop();
      op = startOperator("webhooks-rotated", t.kubeconfigPath, args, KOBUN_E2E);
      await op.waitForLog(/conversion webhook registered/, 20_000);
      const after = await t.client.get(configurations("validatingwebhookconfigurations"), null, name);
      expect(after.webhooks[0].clientConfig.caBundle).not.toBe(before.webhooks[0].clientConfig.caBundle);
      await admissionWorks(t.client, ns, `widget-size.${name}.kobun.dev`, op);
      expect((await t.client.get(widgets("v2"), ns, "stored-as-v1")).spec).toEqual({ replicas: 3, color: "blue" });
    } finally {
      await op.stop();
      for (const plural of ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]) {
        await t.client.delete(configurations(plural), null, name).catch(() => {});
      }
    }
  }, 120_000);

  test("handlers see the review's headers, dryRun and options, the generated name, status writes with subresources [\"*\"] and Scale writes", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-webhook-calls");
    const labels = { "e2e.kobun.dev/admission": "recorded" };
    const calls: AdmissionContext[] = [];
    const registry = new Registry();
    const operations = ["CREATE", "UPDATE", "DELETE"] as const;
    registry.on.validate("configmaps", (ctx) => void calls.push(ctx), { id: "calls", operations, labels });
    // v1 named: the group's preferred version is KobunWidget's v2, and resolve() looks only there.
    registry.on.validate(`${FLAKY_STATUSES.plural}.${FLAKY_STATUSES.group}/v1`, (ctx) => void calls.push(ctx), { id: "every", subresources: ["*"], labels });
    // No labels on a Scale: this namespace's Deployments are chosen by a CEL matchCondition instead.
    const ours = [{ name: "this-namespace", expression: `request.namespace == "${ns}"` }];
    registry.on.validate("deployments.apps", (ctx) => void calls.push(ctx), { id: "scales", subresources: ["scale"], operations: ["UPDATE"], matchConditions: ours });
    const operator = await startWebhookOperator(t, ns, registry);
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const configMap = (metadata: Record<string, unknown>) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { ...metadata, labels } });
    try {
      await untilCalled(t, ns, labels, () => calls.length > 0);
      calls.length = 0;
      const meta = { kind: "CreateOptions", apiVersion: "meta.k8s.io/v1" };
      const dry = await rawRequest(t.client, "POST", `${path}?dryRun=All&fieldManager=me&fieldValidation=Strict`, configMap({ generateName: "gen-" }));
      expect(dry.status).toBe(201);
      const generated = ((await dry.json()) as { metadata: { name: string } }).metadata.name;
      expect((await rawRequest(t.client, "POST", path, configMap({ name: "x" }))).status).toBe(201);
      await rawRequest(t.client, "PATCH", `${path}/x?dryRun=All`, { data: { b: "2" } }, "application/merge-patch+json");
      await rawRequest(t.client, "DELETE", `${path}/x`, { dryRun: ["All"], propagationPolicy: "Background" });
      expect((await rawRequest(t.client, "DELETE", `${path}/x?gracePeriodSeconds=3`, undefined)).status).toBe(200);
      expect(calls.map((c) => [c.operation, c.name, c.object.metadata.name, c.dryRun, c.request.options])).toEqual([
        ["CREATE", generated, generated, true, { ...meta, dryRun: ["All"], fieldManager: "me", fieldValidation: "Strict" }],
        ["CREATE", "x", "x", false, meta],
        ["UPDATE", "x", "x", true, { kind: "UpdateOptions", apiVersion: "meta.k8s.io/v1", dryRun: ["All"] }],
        ["DELETE", "x", "x", true, { kind: "DeleteOptions", apiVersion: "meta.k8s.io/v1", dryRun: ["All"], propagationPolicy: "Background" }],
        ["DELETE", "x", "x", false, { kind: "DeleteOptions", apiVersion: "meta.k8s.io/v1", gracePeriodSeconds: 3 }],
      ]);
      for (const call of calls) {
        expect(call.headers).toMatchObject({ "content-type": "application/json", accept: "application/json, */*", "user-agent": "kube-apiserver-admission" });
        expect(call.peer).toBeNull();
      }

      calls.length = 0;
      await t.client.create(FLAKY_STATUSES, ns, { apiVersion: "e2e.kobun.dev/v1", kind: "KobunFlakyStatus", metadata: { name: "s", labels }, spec: {} });
      await t.client.patch(FLAKY_STATUSES, ns, "s", { status: { seen: true } }, { subresource: "status" });
      expect(calls.map((c) => [c.operation, c.subresource, c.request.requestSubResource])).toEqual([["CREATE", undefined, undefined], ["UPDATE", "status", "status"]]);

      calls.length = 0;
      const template = { metadata: { labels: { app: "d" } }, spec: { containers: [{ name: "c", image: "registry.k8s.io/pause:3.9" }] } };
      await t.client.create(DEPLOYMENTS, ns, { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { replicas: 1, selector: { matchLabels: { app: "d" } }, template } });
      const scaled = await rawRequest(t.client, "PATCH", `/apis/apps/v1/namespaces/${ns}/deployments/d/scale`, { spec: { replicas: 3 } }, "application/merge-patch+json");
      expect(scaled.status).toBe(200);
      expect(calls.map((c) => [c.subresource, c.request.kind, c.request.resource.resource, c.object.kind, c.object.spec?.replicas, c.oldObject?.spec?.replicas]))
        .toEqual([["scale", { group: "autoscaling", version: "v1", kind: "Scale" }, "deployments", "Scale", 3, 1]]);
    } finally {
      await operator.stop();
    }
  }, 120_000);
});
