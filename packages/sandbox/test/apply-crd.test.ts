// Server-side apply of custom resources by their CRD's schema (issue 18): a list declared
// `x-kubernetes-list-type: map` is keyed by its `x-kubernetes-list-map-keys`, `set` by value,
// `x-kubernetes-map-type: atomic` is one field; metadata is ObjectMeta (finalizers a set), as
// kube-apiserver types a custom resource. The same scenario against the real server: test/e2e/apply-crd.e2e.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
  const crd = {
    apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "gates.lm.kobun.dev" },
    spec: { group: "lm.kobun.dev", scope: "Namespaced", names: { kind: "Gate", plural: "gates", singular: "gate" },
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: {
        ports: { type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "protocol"],
          items: { type: "object", required: ["name"], properties: { name: { type: "string" }, protocol: { type: "string", default: "TCP" }, port: { type: "integer" } } } },
        tags: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
        selector: { type: "object", "x-kubernetes-map-type": "atomic", additionalProperties: { type: "string" } },
      } } } } } }] },
  };
  expect((await api(sb, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)).status).toBe(201);
});
afterAll(() => sb.stop());

const GATES = "/apis/lm.kobun.dev/v1/namespaces/default/gates";
async function apply(manager: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}, force = false) {
  const body = { apiVersion: "lm.kobun.dev/v1", kind: "Gate", metadata: { name: "g", ...metadata }, spec };
  const res = await fetch(`${sb.url}${GATES}/g?fieldManager=${manager}${force ? "&force=true" : ""}`, {
    method: "PATCH", headers: { "content-type": "application/apply-patch+yaml" }, body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() as any };
}
const fieldsOf = (o: any, manager: string) => o.metadata.managedFields.find((m: any) => m.manager === manager)?.fieldsV1;

describe("server-side apply of a custom resource by its CRD's schema", () => {
  test("two managers applying different list-map entries each own theirs; the list keeps both", async () => {
    expect((await apply("alice", { ports: [{ name: "http", protocol: "TCP", port: 80 }], tags: ["a"], selector: { app: "x" } }, { finalizers: ["kobun.dev/a"] })).status).toBe(201);
    const r = await apply("bob", { ports: [{ name: "dns", protocol: "UDP", port: 53 }], tags: ["b"] }, { finalizers: ["kobun.dev/b"] });
    expect(r.status).toBe(200);
    expect(r.body.spec.ports).toEqual([{ name: "http", protocol: "TCP", port: 80 }, { name: "dns", protocol: "UDP", port: 53 }]);
    expect(r.body.spec.tags).toEqual(["a", "b"]);
    expect(r.body.metadata.finalizers).toEqual(["kobun.dev/a", "kobun.dev/b"]);
    expect(fieldsOf(r.body, "alice")).toEqual({
      "f:metadata": { "f:finalizers": { 'v:"kobun.dev/a"': {} } },
      "f:spec": { "f:ports": { 'k:{"name":"http","protocol":"TCP"}': { ".": {}, "f:name": {}, "f:port": {}, "f:protocol": {} } }, "f:selector": {}, "f:tags": { 'v:"a"': {} } },
    });
    expect(fieldsOf(r.body, "bob")).toEqual({
      "f:metadata": { "f:finalizers": { 'v:"kobun.dev/b"': {} } },
      "f:spec": { "f:ports": { 'k:{"name":"dns","protocol":"UDP"}': { ".": {}, "f:name": {}, "f:port": {}, "f:protocol": {} } }, "f:tags": { 'v:"b"': {} } },
    });
  });

  test("an entry a manager stops applying goes; another manager's entry stays; an atomic map conflicts whole", async () => {
    const r = await apply("alice", { tags: ["a"], selector: { app: "x" } });
    expect(r.body.spec.ports).toEqual([{ name: "dns", protocol: "UDP", port: 53 }]);
    const clash = await apply("bob", { selector: { app: "x", tier: "y" } });
    expect(clash.status).toBe(409);
    expect(clash.body.details.causes).toEqual([{ reason: "FieldManagerConflict", message: 'conflict with "alice"', field: ".spec.selector" }]);
  });

  test("a merge patch's Update entry owns the list-map entry it changed, by key", async () => {
    const patched = await fetch(`${sb.url}${GATES}/g?fieldManager=editor`, {
      method: "PATCH", headers: { "content-type": "application/json-patch+json" },
      body: JSON.stringify([{ op: "replace", path: "/spec/ports/0/port", value: 5353 }]),
    });
    const body = await patched.json() as any;
    expect(patched.status).toBe(200);
    expect(fieldsOf(body, "editor")).toEqual({ "f:spec": { "f:ports": { 'k:{"name":"dns","protocol":"UDP"}': { "f:port": {} } } } });
    expect(fieldsOf(body, "bob")["f:spec"]["f:ports"]).toEqual({ 'k:{"name":"dns","protocol":"UDP"}': { ".": {}, "f:name": {}, "f:protocol": {} } });
  });
});
