// metadata.generation only where kube-apiserver's strategy keeps one (src/generation.ts; the real
// server's answers are test/e2e/generation.e2e.ts): custom resources and the tracked built-ins
// start at 1; ConfigMaps, Secrets, Services, Namespaces, RBAC objects and Leases get none from
// create, update or a marked deletion; a generation the client sends on create of such a kind is
// kept and never changed by an update.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api, CM } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox(); });
afterAll(async () => { await sb.stop(); });

const MERGE = "application/merge-patch+json";
const labels = { app: "g" };
const template = { metadata: { labels }, spec: { containers: [{ name: "c", image: "i" }] } };
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const crd = {
  metadata: { name: "gizmos.gen.kobun.dev" },
  spec: {
    group: "gen.kobun.dev", scope: "Namespaced", names: { plural: "gizmos", kind: "Gizmo" },
    versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }],
  },
};

/** collection, a valid body, whether the kind tracks generation */
const KINDS: [string, Record<string, unknown>, boolean][] = [
  [CM, { data: { a: "1" } }, false],
  ["/api/v1/namespaces/default/secrets", { data: { a: "MQ==" } }, false],
  ["/api/v1/namespaces/default/services", { spec: { ports: [{ port: 80 }] } }, false],
  ["/api/v1/namespaces", {}, false],
  ["/apis/rbac.authorization.k8s.io/v1/clusterroles", { rules: [] }, false],
  ["/apis/coordination.k8s.io/v1/namespaces/default/leases", { spec: { holderIdentity: "me" } }, false],
  ["/apis/apps/v1/namespaces/default/deployments", { spec: { selector: { matchLabels: labels }, template } }, true],
  ["/api/v1/namespaces/default/pods", { spec: template.spec }, true],
  ["/apis/batch/v1/namespaces/default/cronjobs", { spec: { schedule: "* * * * *", jobTemplate: { spec: { template: { spec: { ...template.spec, restartPolicy: "Never" } } } } } }, true],
];

describe("metadata.generation", () => {
  test("tracked kinds start at 1 and gain one on a marked deletion; the others have none, whatever the write", async () => {
    for (const [collection, body, tracked] of KINDS) {
      const created = await api(sb, "POST", collection, { metadata: { name: "g1", finalizers: ["kobun.dev/hold"] }, ...body });
      expect([collection, created.status]).toEqual([collection, 201]);
      const labelled = await api(sb, "PATCH", `${collection}/g1`, { metadata: { labels: { x: "y" } } }, MERGE);
      const put = await api(sb, "PUT", `${collection}/g1`, { ...labelled.body, metadata: { ...labelled.body.metadata, generation: 4 } });
      const deleting = await api(sb, "DELETE", `${collection}/g1`, {});
      const seen = [created, labelled, put, deleting].map((r) => r.body.metadata.generation);
      expect([collection, seen]).toEqual([collection, tracked ? [1, 1, 1, 2] : [undefined, undefined, undefined, undefined]]);
      await api(sb, "PATCH", `${collection}/g1`, { metadata: { finalizers: null } }, MERGE);
    }
  });

  test("a generation the client sends: kept on create of an untracked kind, never updated; a tracked kind starts at 1", async () => {
    const given = await api(sb, "POST", CM, { metadata: { name: "given", generation: 5, finalizers: ["kobun.dev/hold"] }, data: { a: "1" } });
    const changed = await api(sb, "PATCH", `${CM}/given`, { metadata: { generation: 9 }, data: { a: "2" } }, MERGE);
    const deleting = await api(sb, "DELETE", `${CM}/given`, {});
    expect([given, changed, deleting].map((r) => r.body.metadata.generation)).toEqual([5, 5, 6]);
    await api(sb, "PATCH", `${CM}/given`, { metadata: { finalizers: null } }, MERGE);
    await api(sb, "POST", CM, { metadata: { name: "none" } });
    expect((await api(sb, "PATCH", `${CM}/none`, { metadata: { generation: 3 } }, MERGE)).body.metadata.generation).toBeUndefined();

    const deployments = "/apis/apps/v1/namespaces/default/deployments";
    const made = await api(sb, "POST", deployments, { metadata: { name: "given", generation: 5 }, spec: { selector: { matchLabels: labels }, template } });
    expect(made.body.metadata.generation).toBe(1);
  });

  test("a custom resource tracks it; a CRD's marked deletion keeps its generation", async () => {
    const created = await api(sb, "POST", CRDS, crd);
    expect(created.body.metadata.generation).toBe(1);
    const gizmos = "/apis/gen.kobun.dev/v1/namespaces/default/gizmos";
    const gizmo = await api(sb, "POST", gizmos, { apiVersion: "gen.kobun.dev/v1", kind: "Gizmo", metadata: { name: "g" }, spec: { size: 1 } });
    const grown = await api(sb, "PATCH", `${gizmos}/g`, { spec: { size: 2 } }, MERGE);
    expect([gizmo, grown].map((r) => r.body.metadata.generation)).toEqual([1, 2]);
    await api(sb, "PATCH", `${CRDS}/${crd.metadata.name}`, { metadata: { finalizers: ["kobun.dev/hold"] } }, MERGE);
    const deleting = await api(sb, "DELETE", `${CRDS}/${crd.metadata.name}`, {});
    expect([deleting.status, deleting.body.metadata.deletionTimestamp !== undefined, deleting.body.metadata.generation]).toEqual([200, true, 1]);
    await api(sb, "PATCH", `${CRDS}/${crd.metadata.name}`, { metadata: { finalizers: null } }, MERGE);
  });
});
