// OpenAPI v3 for kubectl (issue 18): an index of the served group-versions, one document each
// with the resources' paths (GVK, fieldValidation) and the CRDs' schemas, ETags and 304s,
// following CRDs as they come and go; and fieldValidation=Strict for custom resources.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api } from "./helpers.ts";

const crd = (group: string) => ({
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: `gizmos.${group}` },
  spec: {
    group, scope: "Namespaced", names: { kind: "Gizmo", plural: "gizmos" },
    versions: [{
      name: "v1", served: true, storage: true,
      schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", description: "what it is", properties: { size: { type: "integer" } } } } } },
    }],
  },
});
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox(); });
afterAll(() => sb.stop());

const index = async () => ((await api(sb, "GET", "/openapi/v3")).body as any).paths as Record<string, { serverRelativeURL: string }>;

describe("OpenAPI v3", () => {
  test("the index lists every served group-version, a CRD's while it exists", async () => {
    const before = await index();
    for (const gv of ["api/v1", "apis/apps/v1", "apis/rbac.authorization.k8s.io/v1", "apis/authorization.k8s.io/v1"]) expect(before[gv]?.serverRelativeURL).toMatch(new RegExp(`^/openapi/v3/${gv}\\?hash=[0-9A-F]{128}$`));
    expect(before["apis/one.example.com/v1"]).toBeUndefined();
    expect((await api(sb, "POST", CRDS, crd("one.example.com"))).status).toBe(201);
    expect((await index())["apis/one.example.com/v1"]).toBeDefined();
    await api(sb, "DELETE", `${CRDS}/gizmos.one.example.com`);
    expect((await index())["apis/one.example.com/v1"]).toBeUndefined();
    expect((await api(sb, "GET", "/openapi/v3/apis/one.example.com/v1")).status).toBe(404);
  });

  test("a document: paths with the GVK and fieldValidation; a CRD's schema under its kube-openapi name", async () => {
    await api(sb, "POST", CRDS, crd("two.example.com"));
    const core = (await api(sb, "GET", "/openapi/v3/api/v1")).body as any;
    const patch = core.paths["/api/v1/namespaces/{namespace}/configmaps/{name}"].patch;
    expect(patch["x-kubernetes-group-version-kind"]).toEqual({ group: "", version: "v1", kind: "ConfigMap" });
    expect(patch.parameters).toContainEqual({ name: "fieldValidation", in: "query", schema: { type: "string", uniqueItems: true } });
    expect(core.paths["/api/v1/namespaces/{name}"]).toBeDefined();
    // the built-in kinds' schemas, as kube-apiserver v1.37.2 publishes them, with what they refer to
    expect(core.paths["/api/v1/namespaces/{namespace}/configmaps"].post.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/io.k8s.api.core.v1.ConfigMap" });
    // kubectl's client-side apply computes a strategic merge patch only where the patch lists it
    expect(Object.keys(patch.requestBody.content)).toEqual(["application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"]);
    expect(core.components.schemas["io.k8s.api.core.v1.ConfigMap"].properties.data.additionalProperties).toMatchObject({ type: "string" });
    expect(core.components.schemas["io.k8s.api.core.v1.PodSpec"].properties.containers["x-kubernetes-patch-merge-key"]).toBe("name");
    expect(core.components.schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]).toBeDefined();
    const doc = (await api(sb, "GET", "/openapi/v3/apis/two.example.com/v1")).body as any;
    const schema = doc.components.schemas["com.example.two.v1.Gizmo"];
    expect(schema["x-kubernetes-group-version-kind"]).toEqual([{ group: "two.example.com", kind: "Gizmo", version: "v1" }]);
    expect(schema.properties.spec).toEqual({ type: "object", description: "what it is", properties: { size: { type: "integer" } } });
    expect(doc.paths["/apis/two.example.com/v1/namespaces/{namespace}/gizmos/{name}"].put.requestBody.content["application/json"].schema)
      .toEqual({ $ref: "#/components/schemas/com.example.two.v1.Gizmo" });
    expect(Object.keys(doc.paths["/apis/two.example.com/v1/namespaces/{namespace}/gizmos/{name}"].patch.requestBody.content))
      .toEqual(["application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"]);
  });

  test("ETag, 304 on If-None-Match, immutable under its hash; the hash changes with the CRDs of the group", async () => {
    await api(sb, "POST", CRDS, crd("three.example.com"));
    const url = (await index())["apis/three.example.com/v1"]!.serverRelativeURL;
    const first = await fetch(sb.url + url);
    const etag = first.headers.get("etag")!;
    expect(etag).toBe(`"${url.split("hash=")[1]}"`);
    expect(first.headers.get("cache-control")).toBe("public, immutable");
    expect((await fetch(sb.url + "/openapi/v3/apis/three.example.com/v1")).headers.get("cache-control")).toBe("no-cache, private");
    expect((await fetch(sb.url + url, { headers: { "if-none-match": etag } })).status).toBe(304);
    const other = { ...crd("three.example.com"), metadata: { name: "doodads.three.example.com" } };
    other.spec = { ...other.spec, names: { kind: "Doodad", plural: "doodads" } };
    await api(sb, "POST", CRDS, other);
    expect((await index())["apis/three.example.com/v1"]!.serverRelativeURL).not.toBe(url);
    expect((await fetch(sb.url + "/openapi/v3/apis/three.example.com/v1", { headers: { "if-none-match": etag } })).status).toBe(200);
  });
});

describe("fieldValidation=Strict", () => {
  test("a custom resource's unknown fields are refused (400) instead of pruned; the default prunes", async () => {
    await api(sb, "POST", CRDS, crd("four.example.com"));
    const path = "/apis/four.example.com/v1/namespaces/default/gizmos";
    const body = (name: string) => ({ apiVersion: "four.example.com/v1", kind: "Gizmo", metadata: { name }, spec: { size: 1, colour: "red", extra: { a: 1 } } });
    const strict = await api(sb, "POST", `${path}?fieldValidation=Strict`, body("s"));
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe('Gizmo in version "v1" cannot be handled as a Gizmo: strict decoding error: unknown field "spec.colour", unknown field "spec.extra"');
    const lax = await api(sb, "POST", path, body("l"));
    expect({ status: lax.status, spec: lax.body.spec }).toEqual({ status: 201, spec: { size: 1 } });
    const patched = await api(sb, "PATCH", `${path}/l?fieldValidation=Strict`, { spec: { colour: "blue" } }, "application/merge-patch+json");
    // a patch's result fails its strict decoding: the real server's 422 on "patch" (sandbox-fidelity-6.e2e.ts)
    expect([patched.status, patched.body.details.causes[0].field]).toEqual([422, "patch"]);
  });
});

describe("fieldValidation=Strict for built-in kinds", () => {
  test("a field the kind's published schema does not have: 400 naming it, at any depth; known fields pass", async () => {
    const bad = await api(sb, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bad", labelz: {} }, datta: { a: "1" } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.labelz", unknown field "datta"');
    const deep = await api(sb, "POST", "/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict", {
      apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" },
      spec: { selector: { matchLabels: { a: "b" } }, template: { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "c", image: "i", imagePullPolicy: "Always", ports: [{ containerPort: 80, protocoll: "TCP" }] }] } } },
    });
    expect(deep.body.message).toMatch(/strict decoding error: unknown field "spec\.template\.spec\.containers\[0\]\.ports\[0\]\.protocoll"$/);
    const good = await api(sb, "POST", "/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict", {
      apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "ok", labels: { a: "b" }, annotations: { x: "y" } },
      spec: { replicas: 2, strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: 1 } }, selector: { matchLabels: { a: "b" } },
        template: { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "c", image: "i", resources: { limits: { cpu: "1" } }, env: [{ name: "E", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }] }] } } },
    });
    expect(good.status).toBe(201);
    // without Strict the sandbox stores built-ins as sent
    expect((await api(sb, "POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "lax" }, datta: 1 })).status).toBe(201);
  });
});
