// What kubectl needs from discovery and the self-reviews (issue 18): a current version, the
// "all" category, short and singular names, SelfSubjectAccessReview / SelfSubjectRulesReview /
// SelfSubjectReview answered from the sandbox's RBAC.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";

const CRD = {
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com", scope: "Namespaced",
    names: { kind: "Widget", plural: "widgets", singular: "widget", shortNames: ["wd"], categories: ["all", "toys"] },
    versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }],
  },
};

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ token: "admin" });
});
afterAll(() => sb.stop());

const as = async (token: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(sb.url + path, {
    method, headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() as any };
};
const resource = (list: any, name: string) => list.resources.find((r: any) => r.name === name);

describe("discovery for kubectl", () => {
  test("the server is v1.37 (kubectl warns on a skew of more than one minor)", async () => {
    const v = (await as("admin", "GET", "/version")).body;
    expect({ major: v.major, minor: v.minor }).toEqual({ major: "1", minor: "37" });
    expect(v.gitVersion).toMatch(/^v1\.37\.\d+-kobun-sandbox$/);
  });

  test("categories: the \"all\" kinds and a CRD's own; short and singular names", async () => {
    const apps = (await as("admin", "GET", "/apis/apps/v1")).body;
    expect(resource(apps, "deployments")).toMatchObject({ singularName: "deployment", shortNames: ["deploy"], categories: ["all"] });
    const core = (await as("admin", "GET", "/api/v1")).body;
    for (const name of ["pods", "services", "replicationcontrollers"]) expect(resource(core, name).categories).toEqual(["all"]);
    expect(resource(core, "configmaps").categories).toBeUndefined();
    expect((await as("admin", "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD)).status).toBe(201);
    const ex = (await as("admin", "GET", "/apis/example.com/v1")).body;
    expect(resource(ex, "widgets")).toMatchObject({ singularName: "widget", shortNames: ["wd"], categories: ["all", "toys"] });
  });

  test("the self-reviews are create-only, cluster-scoped and stored nowhere", async () => {
    const authz = (await as("admin", "GET", "/apis/authorization.k8s.io/v1")).body;
    expect(resource(authz, "selfsubjectaccessreviews")).toMatchObject({ namespaced: false, kind: "SelfSubjectAccessReview", verbs: ["create"] });
    expect((await as("admin", "GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")).status).toBe(405);
  });
});

describe("aggregated discovery", () => {
  const KUBECTL_ACCEPT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
  const get = async (path: string, accept: string) => {
    const res = await fetch(sb.url + path, { headers: { authorization: "Bearer admin", accept } });
    return { type: res.headers.get("content-type"), body: await res.json() as any };
  };

  test("/apis and /api in one document each when kubectl asks for apidiscovery.k8s.io/v2", async () => {
    const apis = await get("/apis", KUBECTL_ACCEPT);
    expect(apis.type).toBe("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
    expect({ kind: apis.body.kind, apiVersion: apis.body.apiVersion }).toEqual({ kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2" });
    const apps = apis.body.items.find((g: any) => g.metadata.name === "apps");
    const deployments = apps.versions[0].resources.find((r: any) => r.resource === "deployments");
    expect(deployments).toEqual({
      resource: "deployments", responseKind: { group: "apps", version: "v1", kind: "Deployment" }, scope: "Namespaced", singularResource: "deployment",
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"], shortNames: ["deploy"], categories: ["all"],
      subresources: [
        { subresource: "scale", responseKind: { group: "autoscaling", version: "v1", kind: "Scale" }, verbs: ["get", "patch", "update"] },
        { subresource: "status", responseKind: { group: "apps", version: "v1", kind: "Deployment" }, verbs: ["get", "patch", "update"] },
      ],
    });
    expect(apps.versions[0].freshness).toBe("Current");
    expect(apis.body.items.some((g: any) => g.metadata.name === "")).toBe(false);
    const core = await get("/api", KUBECTL_ACCEPT);
    expect(core.body.items.map((g: any) => [g.metadata.name, g.versions.map((v: any) => v.version)])).toEqual([["", ["v1"]]]);
    expect(core.body.items[0].versions[0].resources.find((r: any) => r.resource === "namespaces")).toMatchObject({ scope: "Cluster", shortNames: ["ns"] });
  });

  test("the legacy documents otherwise", async () => {
    expect((await get("/apis", "application/json")).body.kind).toBe("APIGroupList");
    expect((await get("/api", "application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")).body.kind).toBe("APIVersions");
  });
});

describe("self-reviews (auth can-i, auth whoami)", () => {
  let saToken = "";
  beforeAll(async () => {
    await as("admin", "POST", "/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "op" } });
    const rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/default";
    await as("admin", "POST", `${rbac}/roles`, { metadata: { name: "cm-reader" }, rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }] });
    await as("admin", "POST", `${rbac}/rolebindings`, {
      metadata: { name: "op-reads" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "cm-reader" },
      subjects: [{ kind: "ServiceAccount", name: "op", namespace: "default" }],
    });
    saToken = (await as("admin", "POST", "/api/v1/namespaces/default/serviceaccounts/op/token", { spec: {} })).body.status.token;
  });
  const ssar = (token: string, resourceAttributes: Record<string, string>) =>
    as(token, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec: { resourceAttributes } });

  test("SelfSubjectAccessReview: allowed for the admin; for a service account, as its RBAC says", async () => {
    const admin = await ssar("admin", { namespace: "default", verb: "delete", resource: "secrets" });
    expect({ status: admin.status, allowed: admin.body.status.allowed }).toEqual({ status: 201, allowed: true });
    expect((await ssar(saToken, { namespace: "default", verb: "list", resource: "configmaps" })).body.status).toEqual({ allowed: true });
    expect((await ssar(saToken, { namespace: "default", verb: "delete", resource: "configmaps" })).body.status).toEqual({ allowed: false });
    expect((await ssar(saToken, { namespace: "other", verb: "list", resource: "configmaps" })).body.status).toEqual({ allowed: false });
    const nonResource = await as(saToken, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", { spec: { nonResourceAttributes: { path: "/version", verb: "get" } } });
    expect(nonResource.body.status).toEqual({ allowed: true });
    const neither = await as(saToken, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", { spec: {} });
    expect(neither.status).toBe(422);
  });

  test("SelfSubjectRulesReview lists the bound rules, then the bootstrap ones every user has", async () => {
    const r = await as(saToken, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", { spec: { namespace: "default" } });
    expect(r.status).toBe(201);
    expect(r.body.status.resourceRules[0]).toEqual({ verbs: ["get", "list"], apiGroups: [""], resources: ["configmaps"] });
    expect(r.body.status.resourceRules.slice(1).map((x: any) => x.resources).flat()).toEqual(["selfsubjectreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews"]);
    expect(r.body.status.nonResourceRules[0].nonResourceURLs).toContain("/version");
    expect(r.body.status.incomplete).toBe(false);
    const admin = await as("admin", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", { spec: { namespace: "default" } });
    expect(admin.body.status.resourceRules[0]).toEqual({ verbs: ["*"], apiGroups: ["*"], resources: ["*"] });
  });

  test("SelfSubjectReview says who the token is", async () => {
    const r = await as(saToken, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" });
    expect(r.body.status.userInfo).toEqual({ username: "system:serviceaccount:default:op", groups: ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"] });
  });
});
