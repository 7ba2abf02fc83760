// managedFields of writes that are not server-side apply (issue 18): the writer's `Update`
// entry as kube-apiserver v1.37.2 records it (the expected sets were read from test/cluster
// with `kubectl get -o yaml --show-managed-fields`), its manager from fieldManager or the
// User-Agent, and an apply that then conflicts with it; plus the defaults the writer owns.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { managerFromUserAgent } from "../src/ownership.ts";

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox(); });
afterAll(() => sb.stop());

async function call(method: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${sb.url}${path}`, { method, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() as any };
}
const owners = (o: any) => o.metadata.managedFields.map((m: any) => [m.manager, m.operation, m.apiVersion, m.fieldsV1]);
const NS = "/api/v1/namespaces/default";

describe("managedFields of create, update and patch", () => {
  test("a create is the fieldManager's Update entry: new maps and items marked '.'", async () => {
    const r = await call("POST", `${NS}/configmaps?fieldManager=kubectl-create`, { metadata: { name: "o1", labels: { x: "y" } }, data: { a: "1" } });
    expect(r.status).toBe(201);
    expect(owners(r.body)).toEqual([["kubectl-create", "Update", "v1", { "f:data": { ".": {}, "f:a": {} }, "f:metadata": { "f:labels": { ".": {}, "f:x": {} } } }]]);
    expect(r.body.metadata.managedFields[0].time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  test("without fieldManager the manager is the User-Agent's product", async () => {
    const r = await call("POST", `${NS}/configmaps`, { metadata: { name: "o2" }, data: { a: "1" } }, { "user-agent": "my-tool/1.2 (linux/amd64) kubernetes/abc" });
    expect(owners(r.body).map((o: any) => o[0])).toEqual(["my-tool"]);
    expect(managerFromUserAgent("kubectl/v1.37.2 (linux/amd64) kubernetes/abc")).toBe("kubectl");
  });

  test("a patch owns what it changed, taking it from the creator; a no-op patch changes nothing", async () => {
    await call("POST", `${NS}/configmaps?fieldManager=kubectl-create`, { metadata: { name: "o3" }, data: { a: "1" } });
    const merge = { "content-type": "application/merge-patch+json" };
    const p = await call("PATCH", `${NS}/configmaps/o3?fieldManager=kubectl-patch`, { data: { a: "2", b: "2" } }, merge);
    expect(owners(p.body)).toEqual([
      ["kubectl-create", "Update", "v1", { "f:data": {} }],
      ["kubectl-patch", "Update", "v1", { "f:data": { "f:a": {}, "f:b": {} } }],
    ]);
    const again = await call("PATCH", `${NS}/configmaps/o3?fieldManager=kubectl-patch`, { data: { a: "2" } }, merge);
    expect(again.body.metadata.resourceVersion).toBe(p.body.metadata.resourceVersion);
  });

  test("an apply over a created field conflicts with the creator, named with its apiVersion", async () => {
    await call("POST", `${NS}/configmaps?fieldManager=kubectl-create`, { metadata: { name: "o4" }, data: { a: "1" } });
    const r = await call("PATCH", `${NS}/configmaps/o4?fieldManager=kubectl`, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "o4" }, data: { a: "9" } },
      { "content-type": "application/apply-patch+yaml" });
    expect(r.status).toBe(409);
    // as kube-apiserver v1.37.2 words it
    expect(r.body.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.a');
  });

  test("a created Deployment is defaulted and its writer owns the defaults, as on the real server", async () => {
    const dep = {
      apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", labels: { app: "d" } },
      spec: { replicas: 1, selector: { matchLabels: { app: "d" } }, template: { metadata: { labels: { app: "d" } }, spec: { containers: [{ name: "nginx", image: "nginx:1", resources: {} }] } } },
    };
    const r = await call("POST", "/apis/apps/v1/namespaces/default/deployments?fieldManager=kubectl-create", dep);
    expect(r.status).toBe(201);
    expect(r.body.spec).toEqual({
      progressDeadlineSeconds: 600, replicas: 1, revisionHistoryLimit: 10, selector: { matchLabels: { app: "d" } },
      strategy: { rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" }, type: "RollingUpdate" },
      template: { metadata: { labels: { app: "d" } }, spec: {
        containers: [{ image: "nginx:1", imagePullPolicy: "IfNotPresent", name: "nginx", resources: {}, terminationMessagePath: "/dev/termination-log", terminationMessagePolicy: "File" }],
        dnsPolicy: "ClusterFirst", restartPolicy: "Always", schedulerName: "default-scheduler", securityContext: {}, terminationGracePeriodSeconds: 30,
      } },
    });
    expect(r.body.status).toEqual({});
    const leaf = {};
    expect(owners(r.body)).toEqual([["kubectl-create", "Update", "apps/v1", {
      "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
      "f:spec": {
        "f:progressDeadlineSeconds": leaf, "f:replicas": leaf, "f:revisionHistoryLimit": leaf, "f:selector": leaf,
        "f:strategy": { "f:rollingUpdate": { ".": {}, "f:maxSurge": leaf, "f:maxUnavailable": leaf }, "f:type": leaf },
        "f:template": {
          "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
          "f:spec": {
            "f:containers": { 'k:{"name":"nginx"}': { ".": {}, "f:image": leaf, "f:imagePullPolicy": leaf, "f:name": leaf, "f:resources": leaf, "f:terminationMessagePath": leaf, "f:terminationMessagePolicy": leaf } },
            "f:dnsPolicy": leaf, "f:restartPolicy": leaf, "f:schedulerName": leaf, "f:securityContext": leaf, "f:terminationGracePeriodSeconds": leaf,
          },
        },
      },
    }]]);
  });

  test("a created Service is defaulted, its cluster IP allocated and owned by nobody", async () => {
    const svc = { apiVersion: "v1", kind: "Service", metadata: { name: "s", labels: { app: "s" } }, spec: { ports: [{ name: "80-8080", port: 80, targetPort: 8080 }], selector: { app: "s" }, type: "ClusterIP" } };
    const r = await call("POST", `${NS}/services?fieldManager=kubectl-create`, svc);
    expect(r.status).toBe(201);
    const { clusterIP, clusterIPs, ...spec } = r.body.spec;
    expect(clusterIP).toMatch(/^10\.0\.0\.\d+$/);
    expect(clusterIPs).toEqual([clusterIP]);
    expect(spec).toEqual({ internalTrafficPolicy: "Cluster", ipFamilies: ["IPv4"], ipFamilyPolicy: "SingleStack", ports: [{ name: "80-8080", port: 80, protocol: "TCP", targetPort: 8080 }], selector: { app: "s" }, sessionAffinity: "None", type: "ClusterIP" });
    expect(r.body.status).toEqual({ loadBalancer: {} });
    expect(owners(r.body)).toEqual([["kubectl-create", "Update", "v1", {
      "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
      "f:spec": {
        "f:internalTrafficPolicy": {}, "f:ports": { ".": {}, 'k:{"port":80,"protocol":"TCP"}': { ".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}, "f:targetPort": {} } },
        "f:selector": {}, "f:sessionAffinity": {}, "f:type": {},
      },
    }]]);
  });

  test("a custom resource's new spec is marked '.', its metadata not", async () => {
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "owns.o.kobun.dev" },
      spec: { group: "o.kobun.dev", scope: "Namespaced", names: { kind: "Own", plural: "owns", singular: "own" },
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { size: { type: "integer" } } } } } } }] },
    };
    expect((await call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)).status).toBe(201);
    const r = await call("POST", "/apis/o.kobun.dev/v1/namespaces/default/owns?fieldManager=kubectl-create", { apiVersion: "o.kobun.dev/v1", kind: "Own", metadata: { name: "e", labels: { q: "r" } }, spec: { size: 2 } });
    expect(owners(r.body)).toEqual([["kubectl-create", "Update", "o.kobun.dev/v1", { "f:metadata": { "f:labels": { ".": {}, "f:q": {} } }, "f:spec": { ".": {}, "f:size": {} } }]]);
  });

  test("a /scale write is the writer's entry for subresource scale, without a time, taking spec.replicas", async () => {
    const dep = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "sc" }, spec: { replicas: 1, selector: { matchLabels: { a: "b" } }, template: { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "c", image: "c:1" }] } } } };
    await call("POST", "/apis/apps/v1/namespaces/default/deployments?fieldManager=kubectl-create", dep);
    const scaled = await call("PATCH", "/apis/apps/v1/namespaces/default/deployments/sc/scale", { spec: { replicas: 3 } },
      { "content-type": "application/merge-patch+json", "user-agent": "kubectl/v1.37.2 (linux/amd64) kubernetes/abc" });
    expect(scaled.status).toBe(200);
    const got = await (await fetch(`${sb.url}/apis/apps/v1/namespaces/default/deployments/sc`)).json() as any;
    expect(got.metadata.managedFields[0]).toEqual({ apiVersion: "apps/v1", fieldsType: "FieldsV1", fieldsV1: { "f:spec": { "f:replicas": {} } }, manager: "kubectl", operation: "Update", subresource: "scale" });
    expect(got.metadata.managedFields[1].manager).toBe("kubectl-create");
    expect(got.metadata.managedFields[1].fieldsV1["f:spec"]["f:replicas"]).toBeUndefined();
  });
});
