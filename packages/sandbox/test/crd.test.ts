// Discovery, CRD registration/unregistration, status subresource isolation, generation,
// finalizer deletion flow, namespace cascade.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api, cm, CM, WatchReader } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox(); });
afterAll(async () => { await sb.stop(); });

const CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const KW = "/apis/kobun.dev/v1/namespaces/default/widgets";
const crd = (scope = "Namespaced") => ({
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition",
  metadata: { name: "widgets.kobun.dev" },
  spec: {
    group: "kobun.dev", scope, names: { plural: "widgets", singular: "widget", kind: "Widget", shortNames: ["wd"] },
    versions: [
      { name: "v1", served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } },
      { name: "v1beta1", served: true, storage: false, schema: { openAPIV3Schema: { type: "object" } } },
    ],
  },
});

describe("discovery", () => {
  test("/api, /api/v1, /apis, /version, /healthz, /readyz", async () => {
    expect((await api(sb, "GET", "/api")).body).toMatchObject({ kind: "APIVersions", versions: ["v1"] });
    const core = (await api(sb, "GET", "/api/v1")).body;
    expect(core.kind).toBe("APIResourceList");
    expect(core.resources.map((r: any) => r.name)).toEqual(expect.arrayContaining(["namespaces", "namespaces/status", "configmaps", "secrets", "events"]));
    expect(core.resources.find((r: any) => r.name === "namespaces").namespaced).toBe(false);
    const groups = (await api(sb, "GET", "/apis")).body;
    expect(groups.kind).toBe("APIGroupList");
    expect(groups.groups.map((g: any) => g.name)).toEqual(expect.arrayContaining(["coordination.k8s.io", "apiextensions.k8s.io", "events.k8s.io"]));
    expect((await api(sb, "GET", "/apis/coordination.k8s.io/v1")).body.resources[0]).toMatchObject({ name: "leases", kind: "Lease", namespaced: true });
    expect((await api(sb, "GET", "/version")).body.gitVersion).toMatch(/^v1\./);
    expect((await api(sb, "GET", "/healthz")).body).toBe("ok");
    expect((await api(sb, "GET", "/readyz")).status).toBe(200);
    expect((await api(sb, "GET", "/apis/nope.dev/v1")).status).toBe(404);
  });
});

describe("CRDs", () => {
  test("POST a CRD registers the resource with status conditions; DELETE unregisters it", async () => {
    const bad = await api(sb, "POST", CRD, { ...crd(), metadata: { name: "wrong.kobun.dev" } });
    expect(bad.status).toBe(422);
    const r = await api(sb, "POST", CRD, crd());
    expect(r.status).toBe(201);
    const conds = r.body.status.conditions.map((c: any) => [c.type, c.status]);
    expect(conds).toEqual(expect.arrayContaining([["Established", "True"], ["NamesAccepted", "True"]]));
    const disc = (await api(sb, "GET", "/apis/kobun.dev/v1")).body;
    expect(disc.resources.map((x: any) => x.name)).toEqual(["widgets", "widgets/status"]);
    expect((await api(sb, "GET", "/apis/kobun.dev/v1beta1")).body.resources.map((x: any) => x.name)).toEqual(["widgets"]);
    expect((await api(sb, "GET", "/apis")).body.groups.map((g: any) => g.name)).toContain("kobun.dev");
    const w = await api(sb, "POST", KW, { apiVersion: "kobun.dev/v1", kind: "Widget", metadata: { name: "w1" }, spec: { size: 1 }, status: { ignored: true } });
    expect(w.status).toBe(201);
    expect(w.body.status).toBeUndefined();
    expect((await api(sb, "GET", "/apis/kobun.dev/v1beta1/namespaces/default/widgets/w1")).body.apiVersion).toBe("kobun.dev/v1beta1");
    expect((await api(sb, "GET", "/apis/kobun.dev/v1/widgets")).body.kind).toBe("WidgetList");
    const smp = await api(sb, "PATCH", `${KW}/w1`, { spec: { size: 2 } }, "application/strategic-merge-patch+json");
    expect(smp.status).toBe(415);

    const watch = await WatchReader.open(sb, `/apis/kobun.dev/v1/widgets?watch=true&resourceVersion=${sb.store.resourceVersion()}`);
    const del = await api(sb, "DELETE", `${CRD}/widgets.kobun.dev`);
    expect(del.status).toBe(200);
    expect((await watch.nextChange()).type).toBe("DELETED");
    expect(await watch.nextChange()).toBeUndefined();
    expect((await api(sb, "GET", KW)).status).toBe(404);
    expect((await api(sb, "GET", "/apis/kobun.dev/v1")).status).toBe(404);
  });

  test("status subresource isolation and generation", async () => {
    await api(sb, "POST", CRD, crd());
    const c = (await api(sb, "POST", KW, { apiVersion: "kobun.dev/v1", kind: "Widget", metadata: { name: "s1" }, spec: { size: 1 } })).body;
    expect(c.metadata.generation).toBe(1);
    const st = await api(sb, "PATCH", `${KW}/s1/status`, { status: { phase: "Ready" }, spec: { size: 99 }, metadata: { labels: { x: "y" } } }, "application/merge-patch+json");
    expect(st.status).toBe(200);
    expect(st.body.status).toEqual({ phase: "Ready" });
    expect(st.body.spec.size).toBe(1);
    expect(st.body.metadata.labels).toBeUndefined();
    expect(st.body.metadata.generation).toBe(1);
    const main = await api(sb, "PATCH", `${KW}/s1`, { status: { phase: "Hacked" }, metadata: { labels: { a: "b" } } }, "application/merge-patch+json");
    expect(main.body.status).toEqual({ phase: "Ready" });
    expect(main.body.metadata.labels).toEqual({ a: "b" });
    expect(main.body.metadata.generation).toBe(1);
    const spec = await api(sb, "PATCH", `${KW}/s1`, { spec: { size: 2 } }, "application/merge-patch+json");
    expect(spec.body.metadata.generation).toBe(2);
    const put = await api(sb, "PUT", `${KW}/s1/status`, { ...spec.body, status: { phase: "Done" } });
    expect(put.body.status).toEqual({ phase: "Done" });
    expect(put.body.metadata.generation).toBe(2);
    const jp = await api(sb, "PATCH", `${KW}/s1/status`, [{ op: "replace", path: "/status/phase", value: "J" }], "application/json-patch+json");
    expect(jp.body.status.phase).toBe("J");
    expect((await api(sb, "GET", "/apis/kobun.dev/v1beta1/namespaces/default/widgets/s1/status")).status).toBe(404);
    expect((await api(sb, "DELETE", `${KW}/s1/status`)).status).toBe(405);
  });

  test("cluster-scoped custom resources", async () => {
    await api(sb, "POST", CRD, { ...crd("Cluster"), metadata: { name: "gadgets.kobun.dev" }, spec: { ...crd("Cluster").spec, names: { plural: "gadgets", kind: "Gadget" } } });
    const g = await api(sb, "POST", "/apis/kobun.dev/v1/gadgets", { apiVersion: "kobun.dev/v1", kind: "Gadget", metadata: { name: "g1" } });
    expect(g.status).toBe(201);
    expect(g.body.metadata.namespace).toBeUndefined();
    expect((await api(sb, "GET", "/apis/kobun.dev/v1/gadgets/g1")).status).toBe(200);
    expect((await api(sb, "GET", "/apis/kobun.dev/v1/namespaces/default/gadgets")).status).toBe(404);
  });
});

describe("finalizers and namespaces", () => {
  test("DELETE with finalizers sets deletionTimestamp (MODIFIED); emptying finalizers removes (DELETED)", async () => {
    await api(sb, "POST", CM, { metadata: { name: "fin", finalizers: ["kobun.dev/x"] } });
    const w = await WatchReader.open(sb, `${CM}?watch=true&resourceVersion=${sb.store.resourceVersion()}`);
    const d = await api(sb, "DELETE", `${CM}/fin`);
    expect(d.status).toBe(200);
    expect(d.body.metadata.deletionTimestamp).toBeDefined();
    expect(d.body.metadata.deletionGracePeriodSeconds).toBe(0);
    const m = await w.nextChange();
    expect(m.type).toBe("MODIFIED");
    expect(m.object.metadata.deletionTimestamp).toBeDefined();
    expect((await api(sb, "GET", `${CM}/fin`)).status).toBe(200);
    const add = await api(sb, "PATCH", `${CM}/fin`, { metadata: { finalizers: ["kobun.dev/x", "kobun.dev/new"] } }, "application/merge-patch+json");
    expect(add.status).toBe(422);
    expect(add.body.message).toContain("no new finalizers can be added if the object is being deleted");
    const ts = await api(sb, "PATCH", `${CM}/fin`, { metadata: { deletionTimestamp: null } }, "application/merge-patch+json");
    expect(ts.body.metadata.deletionTimestamp).toBe(d.body.metadata.deletionTimestamp);
    const clear = await api(sb, "PATCH", `${CM}/fin`, { metadata: { finalizers: null } }, "application/merge-patch+json");
    expect(clear.status).toBe(200);
    const gone = await w.nextChange();
    expect(gone.type).toBe("DELETED");
    expect(gone.object.metadata.name).toBe("fin");
    expect((await api(sb, "GET", `${CM}/fin`)).status).toBe(404);
    w.close();
  });

  test("deleting a namespace deletes its objects; creating in a missing namespace → 404", async () => {
    await api(sb, "POST", "/api/v1/namespaces", { metadata: { name: "doomed" } });
    await api(sb, "POST", "/api/v1/namespaces/doomed/configmaps", cm("x1"));
    await api(sb, "POST", "/api/v1/namespaces/doomed/secrets", { metadata: { name: "s" }, data: {} });
    const d = await api(sb, "DELETE", "/api/v1/namespaces/doomed");
    expect(d.status).toBe(200);
    expect((await api(sb, "GET", "/api/v1/namespaces/doomed")).status).toBe(404);
    expect(sb.store.objects("", "configmaps", "doomed")).toEqual([]);
    expect(sb.store.objects("", "secrets", "doomed")).toEqual([]);
    expect((await api(sb, "POST", "/api/v1/namespaces/doomed/configmaps", cm("x2"))).status).toBe(404);
    expect((await api(sb, "GET", "/api/v1/namespaces/kube-system")).status).toBe(200);
  });

  test("a namespace with a finalizer-held object stays Terminating (403 on create) until it is released", async () => {
    await api(sb, "POST", "/api/v1/namespaces", { metadata: { name: "slow" } });
    await api(sb, "POST", "/api/v1/namespaces/slow/configmaps", { metadata: { name: "held", finalizers: ["kobun.dev/f"] } });
    const d = await api(sb, "DELETE", "/api/v1/namespaces/slow");
    expect(d.body.status.phase).toBe("Terminating");
    expect((await api(sb, "GET", "/api/v1/namespaces/slow")).body.status.phase).toBe("Terminating");
    expect((await api(sb, "POST", "/api/v1/namespaces/slow/configmaps", cm("late"))).status).toBe(403);
    await api(sb, "PATCH", "/api/v1/namespaces/slow/configmaps/held", { metadata: { finalizers: null } }, "application/merge-patch+json");
    expect((await api(sb, "GET", "/api/v1/namespaces/slow")).status).toBe(404);
    expect((await api(sb, "GET", `${CM}?watch=true&resourceVersion=abc`)).status).toBe(400);
  });
});
