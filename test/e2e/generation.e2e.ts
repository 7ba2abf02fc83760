// metadata.generation, on the real kube-apiserver as on the sandbox: only the kinds whose registry
// strategy tracks it get one (1 on create, +1 when a deletion is only marked); ConfigMaps, Secrets,
// ServiceAccounts, Events, Leases, RBAC objects, Services, Namespaces and PersistentVolumeClaims get none, and no
// update or deletion adds one. A generation the client sends is kept on create of such a kind (the server
// never looks at it again: no update changes it, a marked deletion adds one as for any kind),
// replaced by 1 on a tracked kind; no update sets it. A CustomResourceDefinition's marked deletion
// keeps its generation (its own delete, not the generic one).
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./generation.e2e.ts

import { describe, expect, test } from "bun:test";
import type { KubeClient } from "../../src/kube/client.ts";
import { createNamespace, rawRequest, uniqueName } from "./harness/kube.ts";
import { targetSuite } from "./harness/suite.ts";
import { tableSamples } from "./harness/table-samples.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const MERGE = "application/merge-patch+json";
const HOLD = ["e2e.kobun.dev/hold"];
const RELEASE = { metadata: { finalizers: null } };

/** the built-in kinds (by collection) whose strategy sets metadata.generation, as kube-apiserver answered */
const TRACKED = new Set([
  "/api/v1/pods", "/api/v1/replicationcontrollers", "/apis/apps/v1/deployments", "/apis/apps/v1/replicasets",
  "/apis/apps/v1/daemonsets", "/apis/apps/v1/statefulsets", "/apis/batch/v1/jobs", "/apis/batch/v1/cronjobs",
  "/apis/autoscaling/v2/horizontalpodautoscalers", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
  "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
  "/apis/networking.k8s.io/v1/ingresses", "/apis/networking.k8s.io/v1/networkpolicies", "/apis/policy/v1/poddisruptionbudgets",
]);

async function send(client: KubeClient, method: string, path: string, body?: unknown, contentType?: string): Promise<any> {
  const response = await rawRequest(client, method, path, body, contentType);
  const answer = (await response.json()) as any;
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${answer.message}`);
  return answer;
}
const generationOf = (o: any) => o.metadata.generation;

describe.each(selectedTargets())("metadata.generation on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("each built-in kind: tracked ones start at 1, the others have none after create, read, update and deletion", async () => {
    const { client } = need();
    const ns = await createNamespace(client, "e2e-generation");
    const samples = tableSamples(ns, uniqueName("g").slice(2)).filter((s) => !s.variant);
    const seen: Record<string, unknown[]> = {};
    const expected: Record<string, unknown[]> = {};
    const held: string[] = [];
    try {
      for (const sample of samples) {
        const key = `${sample.api}/${sample.plural}`;
        const collection = `${sample.api}${sample.namespaced ? `/namespaces/${ns}` : ""}/${sample.plural}`;
        const created = await send(client, "POST", collection, sample.body);
        const path = `${collection}/${created.metadata.name}`;
        const read = await send(client, "GET", path);
        const labelled = await send(client, "PATCH", path, { metadata: { labels: { changed: "yes" }, finalizers: HOLD } }, MERGE);
        held.push(path);
        const deleting = await send(client, "DELETE", path, {});
        seen[key] = [created, read, labelled, deleting, await send(client, "GET", path)].map(generationOf);
        // a CRD's own delete leaves its generation; the generic one adds 1 where there is one
        const marked = key.endsWith("/customresourcedefinitions") ? 1 : 2;
        expected[key] = TRACKED.has(key) ? [1, 1, 1, marked, marked] : Array(5).fill(undefined);
      }
    } finally {
      for (const path of held) await rawRequest(client, "PATCH", path, RELEASE, MERGE).catch(() => undefined);
    }
    expect(seen).toEqual(expected);
  }, 60_000);

  test("a generation the client sends: kept on create of an untracked kind and never updated, 1 on a tracked kind", async () => {
    const { client } = need();
    const ns = await createNamespace(client, "e2e-generation");
    const configMaps = `/api/v1/namespaces/${ns}/configmaps`;
    const cm = await send(client, "POST", configMaps, { metadata: { name: "given", generation: 5 }, data: { a: "1" } });
    const put = await send(client, "PUT", `${configMaps}/given`, { ...cm, metadata: { ...cm.metadata, generation: 7 }, data: { a: "2" } });
    const patched = await send(client, "PATCH", `${configMaps}/given`, { metadata: { generation: 9, finalizers: HOLD }, data: { a: "3" } }, MERGE);
    const deleting = await send(client, "DELETE", `${configMaps}/given`, {});
    await send(client, "PATCH", `${configMaps}/given`, RELEASE, MERGE);
    const none = await send(client, "POST", configMaps, { metadata: { name: "none" } });
    const noneSet = await send(client, "PATCH", `${configMaps}/none`, { metadata: { generation: 3 } }, MERGE);
    expect([cm, put, patched, deleting, none, noneSet].map(generationOf)).toEqual([5, 5, 5, 6, undefined, undefined]);

    const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const labels = { app: "g" };
    const spec = { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: "c", image: "nginx" }] } } };
    const deployment = await send(client, "POST", deployments, { metadata: { name: "d", generation: 5 }, spec });
    const scaled = await send(client, "PATCH", `${deployments}/d`, { metadata: { generation: 9 }, spec: { replicas: 2 } }, MERGE);
    const relabelled = await send(client, "PUT", `${deployments}/d`, { ...scaled, metadata: { ...scaled.metadata, generation: 1, labels } });
    expect([deployment, scaled, relabelled].map(generationOf)).toEqual([1, 2, 2]);
  }, 60_000);
});
