// OpenAPI v2 for kubectl and client-go (issue 18): /openapi/v2 as JSON or as gnostic protobuf
// by Accept, built from the served built-in kinds and each CRD's schema made v2, following CRDs as
// they come and go, with one ETag for both forms and 304s.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { decodeOpenAPIV2 } from "../src/openapi-v2-pb.ts";
import { toV2Schema } from "../src/openapi-v2.ts";
import { api } from "./helpers.ts";

const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const CLIENT_GO = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
const crd = (group: string) => ({
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: `gizmos.${group}` },
  spec: {
    group, scope: "Namespaced", names: { kind: "Gizmo", plural: "gizmos" },
    versions: [{
      name: "v1", served: true, storage: true,
      schema: { openAPIV3Schema: { type: "object", properties: {
        spec: { type: "object", required: ["size", "note"], properties: { size: { type: "integer" }, note: { type: "string", nullable: true }, tags: { type: "array", items: { type: "string" } } } },
        status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      } } },
    }],
  },
});

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox(); });
afterAll(() => sb.stop());

const v2 = (accept: string, headers: Record<string, string> = {}) => fetch(`${sb.url}/openapi/v2`, { headers: { accept, ...headers } });
const named = (list: { name: string; value: any }[] | undefined, name: string) => list?.find((e) => e.name === name)?.value;

describe("OpenAPI v2", () => {
  test("JSON: built-in definitions as kube-apiserver serves them (with enums), paths with GVK and fieldValidation", async () => {
    const res = await v2("application/json");
    expect(res.headers.get("content-type")).toBe("application/json");
    const doc = (await res.json()) as any;
    expect({ swagger: doc.swagger, info: doc.info }).toEqual({ swagger: "2.0", info: { title: "Kubernetes", version: "1.37" } });
    expect(doc.definitions["io.k8s.api.core.v1.ConfigMap"]["x-kubernetes-group-version-kind"]).toEqual([{ group: "", kind: "ConfigMap", version: "v1" }]);
    expect(doc.definitions["io.k8s.api.apps.v1.DeploymentStrategy"].properties.type.enum).toEqual(["Recreate", "RollingUpdate"]);
    expect(doc.definitions["io.k8s.api.core.v1.PodSpec"].properties.containers["x-kubernetes-patch-merge-key"]).toBe("name");
    const patch = doc.paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].patch;
    expect(patch["x-kubernetes-group-version-kind"]).toEqual({ group: "apps", kind: "Deployment", version: "v1" });
    expect(patch.parameters).toContainEqual({ uniqueItems: true, type: "string", name: "fieldValidation", in: "query" });
  });

  test("a CRD's definition while it exists: made v2 (nullable and preserve-unknown-fields lose their types), with TypeMeta and ObjectMeta", async () => {
    expect((await api(sb, "POST", CRDS, crd("one.example.com"))).status).toBe(201);
    const def = ((await (await v2("application/json")).json()) as any).definitions["com.example.one.v1.Gizmo"];
    expect(def["x-kubernetes-group-version-kind"]).toEqual([{ group: "one.example.com", kind: "Gizmo", version: "v1" }]);
    expect(def.properties.spec).toEqual({ type: "object", required: ["size"], properties: { size: { type: "integer" }, note: {}, tags: { type: "array", items: { type: "string" } } } });
    expect(def.properties.status).toEqual({ "x-kubernetes-preserve-unknown-fields": true });
    expect(def.properties.metadata.$ref).toBe("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    expect(def.properties.kind.description).toMatch(/^Kind is a string value representing the REST resource/);
    await api(sb, "DELETE", `${CRDS}/gizmos.one.example.com`);
    const after = (await (await v2("application/json")).json()) as any;
    expect(after.definitions["com.example.one.v1.Gizmo"]).toBeUndefined();
    expect(Object.keys(after.paths).filter((p) => p.includes("one.example.com"))).toEqual([]);
  });

  test("protobuf for client-go's Accept: gnostic's Document, what kubectl and cli-runtime read from it", async () => {
    await api(sb, "POST", CRDS, crd("two.example.com"));
    const res = await v2(CLIENT_GO);
    expect(res.headers.get("content-type")).toBe("application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    const doc = decodeOpenAPIV2(new Uint8Array(await res.arrayBuffer()));
    expect(doc.swagger).toBe("2.0");
    const gizmo = named(doc.definitions.additional_properties, "com.example.two.v1.Gizmo");
    // kube-openapi finds a kind by this extension's YAML (explain, client-side validation)
    expect(JSON.parse(named(gizmo.vendor_extension, "x-kubernetes-group-version-kind").yaml)).toEqual([{ group: "two.example.com", kind: "Gizmo", version: "v1" }]);
    const spec = named(gizmo.properties.additional_properties, "spec");
    expect({ type: spec.type.value, required: spec.required }).toEqual({ type: ["object"], required: ["size"] });
    expect(named(spec.properties.additional_properties, "tags").items.schema[0].type.value).toEqual(["string"]);
    const data = named(named(doc.definitions.additional_properties, "io.k8s.api.core.v1.ConfigMap").properties.additional_properties, "data");
    expect(data.additional_properties.schema.type.value).toEqual(["string"]);
    // cli-runtime's fieldValidation check: the patch operation's query parameters by GVK
    const item = named(doc.paths.path, "/apis/two.example.com/v1/namespaces/{namespace}/gizmos/{name}");
    const params = item.patch.parameters.map((p: any) => p.parameter?.non_body_parameter?.query_parameter_sub_schema?.name).filter(Boolean);
    expect(params).toContain("fieldValidation");
    expect(item.patch.parameters[0].parameter.body_parameter.schema._ref).toBe("#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch");
    expect(item.patch.consumes).toEqual(["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"]);
    expect(named(item.patch.responses.response_code, "200").response.schema.schema._ref).toBe("#/definitions/com.example.two.v1.Gizmo");
    expect(named(doc.security_definitions.additional_properties, "BearerToken").api_key_security.in).toBe("header");
  }, 30_000); // the first protobuf document compiles protobufjs' encoders: seconds on a loaded machine

  test("one ETag for JSON and protobuf, 304 on If-None-Match, a new one when a CRD comes; 406 for what it cannot serve", async () => {
    const json = await v2("application/json");
    const etag = json.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    expect((await v2(CLIENT_GO)).headers.get("etag")).toBe(etag);
    expect(json.headers.get("vary")).toBe("Accept");
    const again = await v2(CLIENT_GO, { "if-none-match": etag });
    expect({ status: again.status, etag: again.headers.get("etag") }).toEqual({ status: 304, etag });
    await api(sb, "POST", CRDS, crd("three.example.com"));
    const changed = await v2(CLIENT_GO, { "if-none-match": etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
    expect((await v2("*/*")).headers.get("content-type")).toBe("application/json");
    expect((await v2("text/html;q=0.9, application/com.github.proto-openapi.spec.v2.v1.0+protobuf")).headers.get("content-type"))
      .toBe("application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    expect((await v2("text/plain")).status).toBe(406);
  });
});

describe("toV2Schema", () => {
  test("drops what v2 cannot say, as the apiextensions server does", () => {
    expect(toV2Schema({
      type: "object", required: ["a", "b"], anyOf: [{ required: ["a"] }],
      properties: { a: { type: "string", nullable: true }, b: { type: "array" }, c: { type: "object", "x-kubernetes-preserve-unknown-fields": true, properties: { d: {} } } },
      additionalProperties: { type: "integer", oneOf: [{ minimum: 1 }] },
    })).toEqual({
      type: "object", required: ["b"],
      properties: { a: {}, b: {}, c: { "x-kubernetes-preserve-unknown-fields": true } },
      additionalProperties: { type: "integer" },
    });
  });
});
