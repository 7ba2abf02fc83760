// Server-side apply with field ownership (issue 18): managedFields, 409 conflicts naming the
// managers and fields, force, removal of fields a manager stops applying, keyed lists.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox(); });
afterAll(() => sb.stop());

const CMS = "/api/v1/namespaces/default/configmaps";
async function apply(path: string, manager: string, body: unknown, force = false) {
  const res = await fetch(`${sb.url}${path}?fieldManager=${manager}${force ? "&force=true" : ""}`, {
    method: "PATCH", headers: { "content-type": "application/apply-patch+yaml" }, body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() as any };
}
const cm = (name: string, data: Record<string, string>, labels?: Record<string, string>) =>
  ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, ...(labels ? { labels } : {}) }, data });
const owners = (o: any) => o.metadata.managedFields.map((m: any) => [m.manager, m.operation, m.fieldsV1]);

describe("server-side apply", () => {
  test("the applied fields are the manager's, in managedFields (FieldsV1)", async () => {
    const r = await apply(`${CMS}/a`, "alice", cm("a", { x: "1" }, { team: "t" }));
    expect(r.status).toBe(201);
    expect(owners(r.body)).toEqual([["alice", "Apply", { "f:data": { "f:x": {} }, "f:metadata": { "f:labels": { "f:team": {} } } }]]);
    expect(r.body.metadata.managedFields[0]).toMatchObject({ apiVersion: "v1", fieldsType: "FieldsV1" });
    expect(r.body.metadata.managedFields[0].time).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  test("another manager changing an owned field: 409 naming manager and field; the same value co-owns; force takes it", async () => {
    await apply(`${CMS}/b`, "alice", cm("b", { x: "1", y: "1" }));
    const refused = await apply(`${CMS}/b`, "bob", cm("b", { x: "2", y: "2" }));
    expect(refused.status).toBe(409);
    expect(refused.body.reason).toBe("Conflict");
    // as kube-apiserver v1.37.2 words it (checked against test/cluster)
    expect(refused.body.message).toBe('Apply failed with 2 conflicts: conflicts with "alice":\n- .data.x\n- .data.y');
    expect(refused.body.details).toEqual({ causes: [".data.x", ".data.y"].map((field) => ({ reason: "FieldManagerConflict", message: 'conflict with "alice"', field })) });
    const shared = await apply(`${CMS}/b`, "bob", cm("b", { x: "1" }));
    expect(shared.status).toBe(200);
    expect(owners(shared.body).map((o: any) => o[0]).sort()).toEqual(["alice", "bob"]);
    const forced = await apply(`${CMS}/b`, "bob", cm("b", { x: "3", y: "3" }), true);
    expect(forced.body.data).toEqual({ x: "3", y: "3" });
    expect(owners(forced.body)).toEqual([["bob", "Apply", { "f:data": { "f:x": {}, "f:y": {} } }]]);
  });

  test("a field the manager no longer applies is removed, unless another manager owns it", async () => {
    await apply(`${CMS}/c`, "alice", cm("c", { x: "1", y: "1", z: "1" }));
    await apply(`${CMS}/c`, "bob", cm("c", { z: "1" }));
    const r = await apply(`${CMS}/c`, "alice", cm("c", { x: "1" }));
    expect(r.body.data).toEqual({ x: "1", z: "1" });
  });

  test("keyed lists: containers by name, each manager's own; an item left out goes", async () => {
    const path = "/apis/apps/v1/namespaces/default/deployments";
    const dep = (containers: { name: string; image: string }[]) => ({
      apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" },
      spec: { selector: { matchLabels: { a: "b" } }, template: { metadata: { labels: { a: "b" } }, spec: { containers } } },
    });
    await apply(`${path}/d`, "alice", dep([{ name: "app", image: "app:1" }, { name: "log", image: "log:1" }]));
    const withSide = await apply(`${path}/d`, "bob", { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { template: { spec: { containers: [{ name: "side", image: "side:1" }] } } } });
    expect(withSide.status).toBe(200);
    const names = (o: any) => o.spec.template.spec.containers.map((c: any) => c.name);
    expect(names(withSide.body)).toEqual(["app", "log", "side"]);
    const bobs = withSide.body.metadata.managedFields.find((m: any) => m.manager === "bob").fieldsV1;
    expect(bobs["f:spec"]["f:template"]["f:spec"]["f:containers"]).toEqual({ 'k:{"name":"side"}': { ".": {}, "f:name": {}, "f:image": {} } });
    const dropped = await apply(`${path}/d`, "alice", dep([{ name: "app", image: "app:2" }]));
    expect(dropped.body.spec.template.spec.containers.map((c: any) => [c.name, c.image])).toEqual([["app", "app:2"], ["side", "side:1"]]);
  });

  test("the configuration must be of the resource's apiVersion and kind; a PUT keeps managedFields, the field it changes passing to its writer", async () => {
    expect((await apply(`${CMS}/e`, "alice", { apiVersion: "v1", kind: "Secret", metadata: { name: "e" } })).status).toBe(400);
    const created = await apply(`${CMS}/f`, "alice", cm("f", { x: "1" }));
    const { managedFields: _m, ...meta } = created.body.metadata;
    const put = await api(sb, "PUT", `${CMS}/f?fieldManager=bob`, { ...created.body, metadata: meta, data: { x: "1", y: "2" } });
    expect(owners(put.body)).toEqual([["alice", "Apply", { "f:data": { "f:x": {} } }], ["bob", "Update", { "f:data": { "f:y": {} } }]]);
    const taken = await api(sb, "PUT", `${CMS}/f?fieldManager=bob`, { ...put.body, data: { x: "3", y: "2" } });
    expect(owners(taken.body)).toEqual([["bob", "Update", { "f:data": { "f:x": {}, "f:y": {} } }]]);
  });

  test("a built-in kind's lists by its schema: Service ports keyed by port and defaulted protocol, finalizers a set, the selector atomic", async () => {
    const SVCS = "/api/v1/namespaces/default/services";
    const svc = (ports: unknown[]) => ({ apiVersion: "v1", kind: "Service", metadata: { name: "dns", finalizers: ["a.example.com/x"] }, spec: { selector: { app: "dns" }, ports } });
    const both = await apply(`${SVCS}/dns`, "alice", svc([{ name: "tcp", port: 53, targetPort: 53 }, { name: "udp", port: 53, protocol: "UDP", targetPort: 53 }]));
    expect(both.status).toBe(201);
    expect(both.body.spec.ports.map((p: any) => `${p.name}:${p.port}/${p.protocol}`)).toEqual(["tcp:53/TCP", "udp:53/UDP"]);
    const item = { ".": {}, "f:name": {}, "f:port": {}, "f:targetPort": {} };
    expect(owners(both.body)).toEqual([["alice", "Apply", {
      "f:metadata": { "f:finalizers": { 'v:"a.example.com/x"': {} } },
      "f:spec": { "f:ports": { 'k:{"port":53,"protocol":"TCP"}': item, 'k:{"port":53,"protocol":"UDP"}': { ...item, "f:protocol": {} } }, "f:selector": {} },
    }]]);
    const udp = await apply(`${SVCS}/dns`, "alice", svc([{ name: "udp", port: 53, protocol: "UDP", targetPort: 5353 }]));
    expect(udp.body.spec.ports).toEqual([{ name: "udp", port: 53, protocol: "UDP", targetPort: 5353 }]);
    await api(sb, "PATCH", `${SVCS}/dns`, { metadata: { finalizers: null } }, "application/merge-patch+json");
  });
});
