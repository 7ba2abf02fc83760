// Behaviours of the real kube-apiserver the e2e suite found missing (test/e2e A4–A7):
// per-resource watch start (410 before a CRD existed), structural-schema pruning and type
// validation of custom resources, the legacy Event namespace rule, and a bad LIST resourceVersion.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api, cm, CM, WatchReader } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox(); });
afterAll(async () => { await sb.stop(); });

const CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const crd = (plural: string, kind: string, schema: unknown, status = false) => ({
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: `${plural}.schema.kobun.dev` },
  spec: {
    group: "schema.kobun.dev", scope: "Namespaced", names: { plural, singular: plural.slice(0, -1), kind },
    versions: [{ name: "v1", served: true, storage: true, ...(status ? { subresources: { status: {} } } : {}), schema: { openAPIV3Schema: schema } }],
  },
});

const TYPED = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        replicas: { type: "integer" },
        ratio: { type: "number" },
        name: { type: "string", nullable: true },
        on: { type: "boolean" },
        port: { "x-kubernetes-int-or-string": true },
        tags: { type: "array", items: { type: "string" } },
        items: { type: "array", items: { type: "object", properties: { a: { type: "string" } } } },
        labels: { type: "object", additionalProperties: { type: "object", properties: { v: { type: "integer" } } } },
        free: { type: "object", "x-kubernetes-preserve-unknown-fields": true, properties: { known: { type: "object", properties: { k: { type: "string" } } } } },
      },
    },
    status: { type: "object", properties: { phase: { type: "string" } } },
  },
};
const TY = "/apis/schema.kobun.dev/v1/namespaces/default/typeds";
const typed = (name: string, spec: unknown, extra: Record<string, unknown> = {}) =>
  ({ apiVersion: "schema.kobun.dev/v1", kind: "Typed", metadata: { name }, spec, ...extra });

describe("watch start per resource (A4)", () => {
  test("a watch from before a CRD's creation gets ERROR 410; from its creation on it works", async () => {
    await api(sb, "POST", CM, cm("before-crd"));
    const before = Number(sb.store.resourceVersion());
    const made = await api(sb, "POST", CRD, crd("watcheds", "Watched", { type: "object", "x-kubernetes-preserve-unknown-fields": true }));
    expect(made.status).toBe(201);
    const start = Number(made.body.metadata.resourceVersion);
    const old = await WatchReader.open(sb, `/apis/schema.kobun.dev/v1/watcheds?watch=1&resourceVersion=${before}`);
    const ev = await old.next();
    expect(ev).toMatchObject({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired", message: `too old resource version: ${before} (${start})` } });
    expect(await old.next()).toBeUndefined();

    const ok = await WatchReader.open(sb, `/apis/schema.kobun.dev/v1/namespaces/default/watcheds?watch=1&resourceVersion=${start}`);
    await api(sb, "POST", "/apis/schema.kobun.dev/v1/namespaces/default/watcheds", { apiVersion: "schema.kobun.dev/v1", kind: "Watched", metadata: { name: "w" } });
    expect(await ok.nextChange()).toMatchObject({ type: "ADDED", object: { metadata: { name: "w" } } });
    ok.close();
    // built-ins are served from sandbox start: an RV after it still replays
    const cmw = await WatchReader.open(sb, `${CM}?watch=1&resourceVersion=${before - 1}`);
    expect(await cmw.nextChange()).toMatchObject({ type: "ADDED", object: { metadata: { name: "before-crd" } } });
    cmw.close();
  });

  test("built-ins: a watch from before sandbox start is too old", async () => {
    const w = await WatchReader.open(sb, `/api/v1/secrets?watch=1&resourceVersion=1`);
    expect(await w.next()).toMatchObject({ type: "ERROR", object: { code: 410, message: expect.stringMatching(/^too old resource version: 1 \(\d+\)$/) } });
  });
});

describe("structural schemas (A5, A6)", () => {
  beforeAll(async () => {
    expect((await api(sb, "POST", CRD, crd("typeds", "Typed", TYPED, true))).status).toBe(201);
  });

  test("create prunes undeclared fields at every level; apiVersion/kind/metadata stay", async () => {
    const r = await api(sb, "POST", TY, typed("p1", {
      replicas: 1, unknown: "x", name: null,
      items: [{ a: "1", b: 2 }], labels: { x: { v: 1, w: 2 } },
      free: { anything: { deep: true }, known: { k: "k", drop: 1 } },
    }, { extra: true, metadata: { name: "p1", labels: { l: "1" } } }));
    expect(r.status).toBe(201);
    expect(r.body.extra).toBeUndefined();
    expect(r.body.metadata.labels).toEqual({ l: "1" });
    expect(r.body.spec).toEqual({ replicas: 1, name: null, items: [{ a: "1" }], labels: { x: { v: 1 } }, free: { anything: { deep: true }, known: { k: "k" } } });
    expect(sb.store.get("schema.kobun.dev", "typeds", "default", "p1").spec.unknown).toBeUndefined();
  });

  test("patch and /status prune too; a patch of only unknown fields is a no-op", async () => {
    const p = await api(sb, "PATCH", `${TY}/p1`, { spec: { ratio: 0.5, junk: 1 } }, "application/merge-patch+json");
    expect(p.status).toBe(200);
    expect(p.body.spec.ratio).toBe(0.5);
    expect(p.body.spec.junk).toBeUndefined();
    const noop = await api(sb, "PATCH", `${TY}/p1`, { spec: { junk: 2 } }, "application/merge-patch+json");
    expect(noop.body.metadata.resourceVersion).toBe(p.body.metadata.resourceVersion);
    expect(noop.body.metadata.generation).toBe(p.body.metadata.generation);
    const st = await api(sb, "PATCH", `${TY}/p1/status`, { status: { phase: "Ok", other: 1 } }, "application/merge-patch+json");
    expect(st.status).toBe(200);
    expect(st.body.status).toEqual({ phase: "Ok" });
  });

  test("a value of the wrong type → 422 FieldValueTypeInvalid, worded like the real server", async () => {
    const r = await api(sb, "POST", TY, typed("bad", { replicas: "many" }));
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({
      kind: "Status", status: "Failure", reason: "Invalid", code: 422,
      message: 'Typed.schema.kobun.dev "bad" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      details: {
        name: "bad", group: "schema.kobun.dev", kind: "Typed",
        causes: [{ reason: "FieldValueTypeInvalid", message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"', field: "spec.replicas" }],
      },
    });
    const many = await api(sb, "POST", TY, typed("bad2", { replicas: 1.5, on: "yes", tags: ["a", 1], labels: { x: { v: "1" } }, port: true, ratio: "1" }));
    expect(many.status).toBe(422);
    expect(many.body.details.causes.map((c: any) => c.field).sort()).toEqual(["spec.labels.x.v", "spec.on", "spec.port", "spec.ratio", "spec.replicas", "spec.tags[1]"]);
    expect(many.body.message).toMatch(/^Typed\.schema\.kobun\.dev "bad2" is invalid: \[/);
    expect((await api(sb, "POST", TY, typed("bad3", "not-an-object"))).body.details.causes[0]).toMatchObject({ field: "spec", message: expect.stringContaining("must be of type object") });
    expect(sb.store.get("schema.kobun.dev", "typeds", "default", "bad")).toBeUndefined();
  });

  test("valid values of every type pass; int-or-string takes both; patches and /status are checked", async () => {
    const ok = await api(sb, "POST", TY, typed("ok", { replicas: 2, ratio: 3, name: "n", on: false, port: "http", tags: ["a"] }));
    expect(ok.status).toBe(201);
    expect((await api(sb, "PATCH", `${TY}/ok`, { spec: { port: 80 } }, "application/merge-patch+json")).status).toBe(200);
    const bad = await api(sb, "PATCH", `${TY}/ok`, { spec: { replicas: "3" } }, "application/merge-patch+json");
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes[0]).toMatchObject({ reason: "FieldValueTypeInvalid", field: "spec.replicas" });
    const st = await api(sb, "PATCH", `${TY}/ok/status`, { status: { phase: 1 } }, "application/merge-patch+json");
    expect(st.status).toBe(422);
    expect(st.body.details.causes[0].field).toBe("status.phase");
  });

  test("preserve-unknown-fields on spec/status (the example CRD) keeps everything there", async () => {
    const schema = { type: "object", properties: { spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true }, status: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } };
    expect((await api(sb, "POST", CRD, crd("keeps", "Keep", schema, true))).status).toBe(201);
    const base = "/apis/schema.kobun.dev/v1/namespaces/default/keeps";
    const r = await api(sb, "POST", base, { apiVersion: "schema.kobun.dev/v1", kind: "Keep", metadata: { name: "k" }, spec: { a: { b: [1, "x"] } }, top: 1 });
    expect(r.body.spec).toEqual({ a: { b: [1, "x"] } });
    expect(r.body.top).toBeUndefined();
    const st = await api(sb, "PATCH", `${base}/k/status`, { status: { kobun: { progress: { h: { retries: 1 } } } } }, "application/merge-patch+json");
    expect(st.body.status).toEqual({ kobun: { progress: { h: { retries: 1 } } } });
  });
});

describe("value constraints (crd-validation.e2e.ts holds the wording to the real server)", () => {
  const CHECKED = {
    type: "object",
    properties: {
      spec: {
        type: "object", required: ["name"],
        properties: {
          name: { type: "string", maxLength: 4 },
          mode: { type: "string", enum: ["a", "b"] },
          count: { type: "integer", minimum: 1 },
          list: { type: "array", maxItems: 1, items: { type: "string", minLength: 2 } },
        },
      },
    },
  };
  const CK = "/apis/schema.kobun.dev/v1/namespaces/default/checkeds";
  const checked = (name: string, spec: unknown) => ({ apiVersion: "schema.kobun.dev/v1", kind: "Checked", metadata: { name }, spec });
  beforeAll(async () => {
    expect((await api(sb, "POST", CRD, crd("checkeds", "Checked", CHECKED))).status).toBe(201);
  });

  test("required, enum, bounds, lengths and counts refuse a write with upstream's causes; a valid one is stored", async () => {
    const r = await api(sb, "POST", CK, checked("bad", { mode: "c", count: 0, list: ["x", "yy"] }));
    expect(r.status).toBe(422);
    expect(r.body.details.causes).toEqual([
      { reason: "FieldValueNotSupported", message: 'Unsupported value: "c": supported values: "a", "b"', field: "spec.mode" },
      { reason: "FieldValueInvalid", message: "Invalid value: 0: spec.count in body should be greater than or equal to 1", field: "spec.count" },
      { reason: "FieldValueInvalid", message: 'Invalid value: "x": spec.list[0] in body should be at least 2 chars long', field: "spec.list[0]" },
      { reason: "FieldValueTooMany", message: "Too many: 2: must have at most 1 item", field: "spec.list" },
      { reason: "FieldValueRequired", message: "Required value", field: "spec.name" },
    ]);
    expect((await api(sb, "POST", CK, checked("long", { name: "toolong" }))).body.message)
      .toBe('Checked.schema.kobun.dev "long" is invalid: spec.name: Too long: may not be more than 4 bytes');
    expect((await api(sb, "POST", CK, checked("good", { name: "ok", mode: "b", count: 1, list: ["yy"] }))).status).toBe(201);
  });
});

describe("Events (A7)", () => {
  const EV = "/api/v1/namespaces/default/events";
  test("involvedObject.namespace must match the Event's namespace (422)", async () => {
    const r = await api(sb, "POST", EV, { metadata: { name: "x1" }, reason: "R", involvedObject: { kind: "ConfigMap", name: "c", namespace: "elsewhere" } });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({
      reason: "Invalid",
      message: 'Event "x1" is invalid: involvedObject.namespace: Invalid value: "elsewhere": does not match event.namespace',
      details: { name: "x1", kind: "Event", causes: [{ reason: "FieldValueInvalid", field: "involvedObject.namespace" }] },
    });
    expect((await api(sb, "POST", EV, { metadata: { name: "x2" }, reason: "R", involvedObject: { kind: "ConfigMap", name: "c", namespace: "default" } })).status).toBe(201);
    // a cluster-scoped object: only from "" / "default" without eventTime
    expect((await api(sb, "POST", EV, { metadata: { name: "x3" }, reason: "R", involvedObject: { kind: "Namespace", name: "n" } })).status).toBe(201);
    const sys = await api(sb, "POST", "/api/v1/namespaces/kube-system/events", { metadata: { name: "x4" }, reason: "R", involvedObject: { kind: "Namespace", name: "n" } });
    expect(sys.status).toBe(422);
    // an update cannot move it either
    const upd = await api(sb, "PATCH", `${EV}/x2`, { involvedObject: { namespace: "other" } }, "application/merge-patch+json");
    expect(upd.status).toBe(422);
  });

  test("events.k8s.io: regarding.namespace follows the same rule", async () => {
    const base = { eventTime: "2024-01-01T00:00:00.000000Z", type: "Normal", reportingController: "kobun.dev/t", reportingInstance: "i", action: "A", reason: "R" };
    expect((await api(sb, "POST", "/api/v1/namespaces", { metadata: { name: "evns" } })).status).toBe(201);
    const bad = await api(sb, "POST", "/apis/events.k8s.io/v1/namespaces/evns/events", { metadata: { name: "y1" }, ...base, regarding: { kind: "Namespace", name: "n" } });
    expect(bad.status).toBe(422);
    // validated as the stored (core) Event: no group in the message, as on kube-apiserver (sandbox-fidelity-4)
    expect(bad.body.message).toMatch(/^Event "y1" is invalid: involvedObject\.namespace/);
    const ok = await api(sb, "POST", "/apis/events.k8s.io/v1/namespaces/default/events", { metadata: { name: "y2" }, ...base, regarding: { kind: "ConfigMap", name: "c", namespace: "default" } });
    expect(ok.status).toBe(201);
  });
});

describe("LIST", () => {
  test("a non-numeric resourceVersion → 400", async () => {
    const r = await api(sb, "GET", `${CM}?resourceVersion=abc`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ kind: "Status", reason: "BadRequest", code: 400 });
  });
});
