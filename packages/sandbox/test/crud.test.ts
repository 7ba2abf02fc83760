// CRUD verbs, errors as Status objects, optimistic concurrency, generation, no-op writes, patches.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api, cm, CM } from "./helpers.ts";

const DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments";

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox(); });
afterAll(async () => { await sb.stop(); });

describe("create/get", () => {
  test("POST sets server metadata; GET returns it", async () => {
    const r = await api(sb, "POST", CM, cm("c1"));
    expect(r.status).toBe(201);
    const m = r.body.metadata;
    expect(m.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(m.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(m.generation).toBeUndefined(); // a ConfigMap's strategy keeps no generation (generation.test.ts)
    expect(Number(m.resourceVersion)).toBeGreaterThan(0);
    expect(m.namespace).toBe("default");
    const g = await api(sb, "GET", `${CM}/c1`);
    expect(g.status).toBe(200);
    expect(g.body).toMatchObject({ kind: "ConfigMap", apiVersion: "v1", metadata: { uid: m.uid } });
    expect(sb.store.get("", "configmaps", "default", "c1")?.data).toEqual({ k: "v" });
  });

  test("generateName, AlreadyExists, Invalid, namespace not found", async () => {
    const g = await api(sb, "POST", CM, { metadata: { generateName: "gen-" } });
    expect(g.body.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
    await api(sb, "POST", CM, cm("dup"));
    const d = await api(sb, "POST", CM, cm("dup"));
    expect(d.status).toBe(409);
    expect(d.body).toMatchObject({ kind: "Status", status: "Failure", reason: "AlreadyExists", code: 409, details: { name: "dup", kind: "configmaps" } });
    const noName = await api(sb, "POST", CM, { metadata: {} });
    expect(noName.status).toBe(422);
    expect(noName.body.reason).toBe("Invalid");
    const bad = await api(sb, "POST", CM, cm("Bad_Name"));
    expect(bad.status).toBe(422);
    const nons = await api(sb, "POST", "/api/v1/namespaces/nope/configmaps", cm("x"));
    expect(nons.status).toBe(404);
    expect(nons.body.message).toBe('namespaces "nope" not found');
    const rv = await api(sb, "POST", CM, { metadata: { name: "withrv", resourceVersion: "5" } });
    expect(rv.status).toBe(500);
  });

  test("404 unknown resource / missing object, 405 wrong method, 400 bad JSON", async () => {
    expect((await api(sb, "GET", "/api/v1/namespaces/default/widgets")).status).toBe(404);
    const missing = await api(sb, "GET", `${CM}/missing`);
    expect(missing.body).toMatchObject({ code: 404, reason: "NotFound", message: 'configmaps "missing" not found' });
    const m = await api(sb, "POST", `${CM}/c1`, cm("c1"));
    expect(m.status).toBe(405);
    expect(m.body.reason).toBe("MethodNotAllowed");
    expect((await api(sb, "PUT", CM, cm("c1"))).status).toBe(405);
    const res = await fetch(sb.url + CM, { method: "POST", body: "{nope", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect((await api(sb, "GET", "/api/v1/namespaces/default/configmaps/c1/status")).status).toBe(404);
  });
});

describe("update", () => {
  test("PUT with stale resourceVersion → 409 Conflict; fresh → 200 and RV bump", async () => {
    const c = (await api(sb, "POST", CM, cm("u1"))).body;
    const ok = await api(sb, "PUT", `${CM}/u1`, { ...c, data: { k: "2" } });
    expect(ok.status).toBe(200);
    expect(Number(ok.body.metadata.resourceVersion)).toBeGreaterThan(Number(c.metadata.resourceVersion));
    const stale = await api(sb, "PUT", `${CM}/u1`, { ...c, data: { k: "3" } });
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe("Conflict");
    expect(stale.body.message).toContain("the object has been modified; please apply your changes to the latest version and try again");
    const unconditional = await api(sb, "PUT", `${CM}/u1`, { metadata: { name: "u1" }, data: { k: "4" } });
    expect(unconditional.status).toBe(200);
    expect(unconditional.body.metadata.uid).toBe(c.metadata.uid);
    const wrongName = await api(sb, "PUT", `${CM}/u1`, { metadata: { name: "other" } });
    expect(wrongName.status).toBe(400);
    expect((await api(sb, "PUT", `${CM}/ghost`, cm("ghost"))).status).toBe(404);
  });

  test("no-op write does not bump resourceVersion or generation", async () => {
    const c = (await api(sb, "POST", CM, cm("noop"))).body;
    const same = await api(sb, "PUT", `${CM}/noop`, c);
    expect(same.body.metadata.resourceVersion).toBe(c.metadata.resourceVersion);
    const p = await api(sb, "PATCH", `${CM}/noop`, { data: { k: "v" } }, "application/merge-patch+json");
    expect(p.body.metadata.resourceVersion).toBe(c.metadata.resourceVersion);
  });

  test("generation bumps on spec changes, not on metadata (a kind that tracks it)", async () => {
    const labels = { app: "gen" };
    const spec = { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: "c", image: "i" }] } } };
    const c = (await api(sb, "POST", DEPLOYMENTS, { metadata: { name: "gen" }, spec })).body;
    expect(c.metadata.generation).toBe(1);
    const labelled = await api(sb, "PATCH", `${DEPLOYMENTS}/gen`, { metadata: { labels: { a: "b" } } }, "application/merge-patch+json");
    expect(labelled.body.metadata.generation).toBe(1);
    expect(labelled.body.metadata.resourceVersion).not.toBe(c.metadata.resourceVersion);
    const scaled = await api(sb, "PATCH", `${DEPLOYMENTS}/gen`, { spec: { replicas: 3 } }, "application/merge-patch+json");
    expect(scaled.body.metadata.generation).toBe(2);
  });
});

describe("patch", () => {
  test("merge patch (RFC 7386) incl. null removal", async () => {
    await api(sb, "POST", CM, { metadata: { name: "mp", annotations: { a: "1", b: "2" } }, data: { x: "1" } });
    const r = await api(sb, "PATCH", `${CM}/mp`, { metadata: { annotations: { a: null, c: "3" } }, data: { y: "2" } }, "application/merge-patch+json");
    expect(r.status).toBe(200);
    expect(r.body.metadata.annotations).toEqual({ b: "2", c: "3" });
    expect(r.body.data).toEqual({ x: "1", y: "2" });
  });

  test("JSON patch (RFC 6902): ops, failing test → 422, remove missing → 422", async () => {
    await api(sb, "POST", CM, { metadata: { name: "jp" }, data: { a: "1" } });
    const r = await api(sb, "PATCH", `${CM}/jp`, [
      { op: "test", path: "/data/a", value: "1" },
      { op: "add", path: "/data/b", value: "2" },
      { op: "replace", path: "/data/a", value: "9" },
      { op: "copy", from: "/data/b", path: "/data/c" },
      { op: "move", from: "/data/c", path: "/data/d" },
      { op: "add", path: "/metadata/finalizers", value: [] },
      { op: "add", path: "/metadata/finalizers/-", value: "x/y" },
      { op: "remove", path: "/metadata/finalizers/0" },
    ], "application/json-patch+json");
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ a: "9", b: "2", d: "2" });
    const t = await api(sb, "PATCH", `${CM}/jp`, [{ op: "test", path: "/data/a", value: "nope" }, { op: "replace", path: "/data/a", value: "0" }], "application/json-patch+json");
    expect(t.status).toBe(422);
    expect(t.body).toMatchObject({ kind: "Status", reason: "Invalid", code: 422 });
    const rm = await api(sb, "PATCH", `${CM}/jp`, [{ op: "remove", path: "/data/zzz" }], "application/json-patch+json");
    expect(rm.status).toBe(422);
    expect(sb.store.get("", "configmaps", "default", "jp")?.data.a).toBe("9");
  });

  test("strategic merge patch on built-ins (merges finalizers); 415 for unknown types; RV in patch must match", async () => {
    await api(sb, "POST", CM, { metadata: { name: "smp", finalizers: ["a/a"] }, data: { a: "1" } });
    const r = await api(sb, "PATCH", `${CM}/smp`, { metadata: { finalizers: ["b/b"] }, data: { b: "2" } }, "application/strategic-merge-patch+json");
    expect(r.status).toBe(200);
    expect(r.body.metadata.finalizers).toEqual(["a/a", "b/b"]);
    expect(r.body.data).toEqual({ a: "1", b: "2" });
    const u = await api(sb, "PATCH", `${CM}/smp`, { data: {} }, "text/plain");
    expect(u.status).toBe(415);
    expect(u.body.reason).toBe("UnsupportedMediaType");
    const c = await api(sb, "PATCH", `${CM}/smp`, { metadata: { resourceVersion: "1" }, data: { c: "3" } }, "application/merge-patch+json");
    expect(c.status).toBe(409);
    expect(c.body.reason).toBe("Conflict");
    const ok = await api(sb, "PATCH", `${CM}/smp`, { metadata: { resourceVersion: r.body.metadata.resourceVersion }, data: { c: "3" } }, "application/merge-patch+json");
    expect(ok.status).toBe(200);
    expect((await api(sb, "PATCH", `${CM}/ghost`, {}, "application/merge-patch+json")).status).toBe(404);
  });
});

describe("delete", () => {
  test("DELETE without finalizers removes; preconditions; deletecollection", async () => {
    const c = (await api(sb, "POST", CM, cm("d1"))).body;
    const pre = await api(sb, "DELETE", `${CM}/d1`, { preconditions: { uid: "other" } });
    expect(pre.status).toBe(409);
    const d = await api(sb, "DELETE", `${CM}/d1`);
    expect(d.status).toBe(200);
    // removed at once: a Status naming it, as the generic store's finalizeDelete answers
    expect(d.body).toEqual({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Success",
      details: { name: "d1", kind: "configmaps", uid: c.metadata.uid } });
    expect((await api(sb, "GET", `${CM}/d1`)).status).toBe(404);
    expect((await api(sb, "DELETE", `${CM}/d1`)).status).toBe(404);
    await api(sb, "POST", CM, cm("dc1", { dc: "yes" }));
    await api(sb, "POST", CM, cm("dc2", { dc: "yes" }));
    const dc = await api(sb, "DELETE", `${CM}?labelSelector=dc%3Dyes`);
    expect(dc.status).toBe(200);
    expect([dc.body.kind, dc.body.items.map((o: any) => o.metadata.name)]).toEqual(["ConfigMapList", ["dc1", "dc2"]]);
    expect(sb.store.objects("", "configmaps", "default").filter((o) => o.metadata.labels?.dc)).toHaveLength(0);
  });

  test("events and leases are stored like any object", async () => {
    const ev = await api(sb, "POST", "/api/v1/namespaces/default/events", { metadata: { name: "e1" }, reason: "Test", involvedObject: { kind: "ConfigMap", name: "c1" } });
    expect(ev.status).toBe(201);
    const ev2 = await api(sb, "POST", "/apis/events.k8s.io/v1/namespaces/default/events", {
      metadata: { name: "e2" }, reason: "Test", eventTime: "2024-01-01T00:00:00.000000Z", type: "Normal",
      reportingController: "kobun.dev/test", reportingInstance: "test-1", action: "Testing", regarding: { kind: "ConfigMap", name: "c1", namespace: "default" },
    });
    expect(ev2.status).toBe(201);
    const lease = await api(sb, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", { metadata: { name: "l1" }, spec: { holderIdentity: "me" } });
    expect(lease.body).toMatchObject({ kind: "Lease", apiVersion: "coordination.k8s.io/v1" });
    // one store behind both APIs: the events.k8s.io one is a core Event about c1 too
    const byReason = await api(sb, "GET", "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dc1");
    expect(byReason.body.items.map((i: any) => i.metadata.name)).toEqual(["e1", "e2"]);
  });
});

describe("server-side apply", () => {
  test("apply-patch+yaml creates, then applies again: the manager's field left out is removed; fieldManager required", async () => {
    const yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: '1'\n";
    const noFm = await api(sb, "PATCH", `${CM}/ssa`, undefined);
    expect(noFm.status).toBeGreaterThanOrEqual(400);
    const send = (text: string, q = "?fieldManager=test") =>
      fetch(`${sb.url}${CM}/ssa${q}`, { method: "PATCH", headers: { "content-type": "application/apply-patch+yaml" }, body: text });
    expect((await send(yaml, "")).status).toBe(422);
    const c = await send(yaml);
    expect(c.status).toBe(201);
    const u = await send("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  b: '2'\n");
    expect(u.status).toBe(200);
    // the same manager no longer applies `a`, and nobody else owns it: gone (as on the real server)
    expect(((await u.json()) as { data: unknown }).data).toEqual({ b: "2" });
  });
});
