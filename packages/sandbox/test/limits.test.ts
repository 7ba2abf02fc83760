// The real API server's size limits, with its messages (checked against kube-apiserver v1.37.2):
// annotations (256 KiB in total), Secret and ConfigMap data (1 MiB), a write request's body
// (3 MiB), a stored object (etcd's 1.5 MiB).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api, cm, CM } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox(); });
afterAll(async () => { await sb.stop(); });

const LIMIT = 256 * 1024;
const TOO_LONG = `metadata.annotations: Too long: may not be more than ${LIMIT} bytes`;

describe("size limits", () => {
  test("annotations over 256 KiB in total (keys + values) are refused with 422 Too long, on create and on patch", async () => {
    const fits = { ...cm("notes-fit"), metadata: { name: "notes-fit", annotations: { a: "x".repeat(LIMIT - 1) } } };
    expect((await api(sb, "POST", CM, fits)).status).toBe(201);
    const over = { ...cm("notes-over"), metadata: { name: "notes-over", annotations: { a: "x".repeat(LIMIT / 2), b: "y".repeat(LIMIT / 2) } } };
    const created = await api(sb, "POST", CM, over);
    expect(created.status).toBe(422);
    expect(created.body).toMatchObject({
      kind: "Status", code: 422, reason: "Invalid", message: `ConfigMap "notes-over" is invalid: ${TOO_LONG}`,
      details: { name: "notes-over", kind: "ConfigMap", causes: [{ reason: "FieldValueTooLong", field: "metadata.annotations" }] },
    });
    const patched = await api(sb, "PATCH", `${CM}/notes-fit`, { metadata: { annotations: { bc: "z" } } }, "application/merge-patch+json");
    expect(patched.status).toBe(422);
    expect(patched.body.message).toBe(`ConfigMap "notes-fit" is invalid: ${TOO_LONG}`);
    expect(sb.store.get("", "configmaps", "default", "notes-fit").metadata.annotations.bc).toBeUndefined();
  });

  test("a Secret's values over 1 MiB (decoded) and a ConfigMap's over 1 MiB (data + binaryData) are refused with 422 Too long", async () => {
    const b64 = (n: number, c = "x") => Buffer.from(c.repeat(n)).toString("base64");
    const SECRETS = "/api/v1/namespaces/default/secrets";
    expect((await api(sb, "POST", SECRETS, { metadata: { name: "s-fit" }, data: { a: b64(1024 * 1024) } })).status).toBe(201);
    const s = await api(sb, "POST", SECRETS, { metadata: { name: "s-over" }, data: { a: b64(1024 * 1024), b: b64(1) } });
    expect(s.status).toBe(422);
    expect(s.body.message).toBe('Secret "s-over" is invalid: data: Too long: may not be more than 1048576 bytes');
    expect((await api(sb, "POST", CM, cm("c-fit", {}, { a: "x".repeat(1024 * 1024) }))).status).toBe(201);
    const c = await api(sb, "POST", CM, { ...cm("c-bin", {}, { a: "x".repeat(1024 * 1024 - 10) }), binaryData: { b: b64(20, "z") } });
    expect(c.status).toBe(422);
    expect(c.body).toMatchObject({
      message: 'ConfigMap "c-bin" is invalid: []: Too long: may not be more than 1048576 bytes',
      details: { causes: [{ reason: "FieldValueTooLong", message: "Too long: may not be more than 1048576 bytes", field: "[]" }] },
    });
  });

  test("a write request body over 3 MiB is refused with 413 RequestEntityTooLarge", async () => {
    const big = cm("huge-body", {}, { k: "v".repeat(3 * 1024 * 1024) });
    const r = await api(sb, "POST", CM, big);
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ kind: "Status", code: 413, reason: "RequestEntityTooLarge", message: "Request entity too large: limit is 3145728" });
  });

  test("an object over etcd's 1.5 MiB is refused with 500 etcdserver: request is too large (no reason)", async () => {
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "blobs.limits.kobun.dev" },
      spec: {
        group: "limits.kobun.dev", scope: "Namespaced", names: { plural: "blobs", singular: "blob", kind: "Blob" },
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }],
      },
    };
    expect((await api(sb, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)).status).toBe(201);
    const BLOBS = "/apis/limits.kobun.dev/v1/namespaces/default/blobs";
    const blob = { apiVersion: "limits.kobun.dev/v1", kind: "Blob", metadata: { name: "grows" }, spec: { k: "v".repeat(1024 * 1024) } };
    expect((await api(sb, "POST", BLOBS, blob)).status).toBe(201);
    const r = await api(sb, "PATCH", `${BLOBS}/grows`, { spec: { k2: "w".repeat(600 * 1024) } }, "application/merge-patch+json");
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "etcdserver: request is too large", code: 500 });
    expect(sb.store.get("limits.kobun.dev", "blobs", "default", "grows").spec.k2).toBeUndefined();
  });
});
