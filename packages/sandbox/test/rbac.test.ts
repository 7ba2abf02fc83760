// Service-account tokens (TokenRequest) and RBAC authorization of their requests; messages
// and Status details as kube-apiserver v1.37 (--authorization-mode=RBAC) returns them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api, WatchReader } from "./helpers.ts";

const RBAC = "/apis/rbac.authorization.k8s.io/v1";
const CRD = {
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "kobunexamples.kobun.dev" },
  spec: {
    group: "kobun.dev", scope: "Namespaced", names: { kind: "KobunExample", plural: "kobunexamples", singular: "kobunexample" },
    versions: [{ name: "v1", served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }],
  },
};
const EX = (ns: string) => `/apis/kobun.dev/v1/namespaces/${ns}/kobunexamples`;

let sb: Sandbox;
const ADMIN = "admin-token";

async function call(token: string | undefined, method: string, path: string, body?: unknown, contentType = "application/json") {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = contentType;
  const res = await fetch(sb.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed: any = text;
  try { parsed = JSON.parse(text); } catch { /* not json */ }
  return { status: res.status, body: parsed };
}
const admin = (method: string, path: string, body?: unknown) => call(ADMIN, method, path, body);

async function namespaceWithSA(ns: string, sa = "op"): Promise<string> {
  await admin("POST", "/api/v1/namespaces", { metadata: { name: ns } });
  await admin("POST", `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: sa } });
  const r = await admin("POST", `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} });
  expect(r.status).toBe(201);
  return r.body.status.token;
}

beforeAll(async () => {
  sb = await startSandbox({ token: ADMIN });
  expect((await admin("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD)).status).toBe(201);
});
afterAll(async () => { await sb.stop(); });

describe("TokenRequest", () => {
  test("issues a token for an existing ServiceAccount; 404 for a missing one", async () => {
    await admin("POST", "/api/v1/namespaces", { metadata: { name: "tr" } });
    await admin("POST", "/api/v1/namespaces/tr/serviceaccounts", { metadata: { name: "sa" } });
    const r = await admin("POST", "/api/v1/namespaces/tr/serviceaccounts/sa/token", { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ kind: "TokenRequest", apiVersion: "authentication.k8s.io/v1", metadata: { name: "sa", namespace: "tr" }, spec: { expirationSeconds: 3600 } });
    expect(typeof r.body.status.token).toBe("string");
    expect(r.body.status.token.length).toBeGreaterThan(20);
    const exp = Date.parse(r.body.status.expirationTimestamp) - Date.now();
    expect(exp).toBeGreaterThan(3500_000);
    expect(exp).toBeLessThan(3700_000);

    const missing = await admin("POST", "/api/v1/namespaces/tr/serviceaccounts/nosa/token", { spec: {} });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ reason: "NotFound", message: 'serviceaccounts "nosa" not found', details: { name: "nosa", kind: "serviceaccounts" } });

    const short = await admin("POST", "/api/v1/namespaces/tr/serviceaccounts/sa/token", { spec: { expirationSeconds: 60 } });
    expect(short.status).toBe(422);
    expect(short.body.message).toBe('TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes');
    expect((await admin("GET", "/api/v1/namespaces/tr/serviceaccounts/sa/token")).status).toBe(405);
  });

  test("the token authenticates as the service account; discovery is open; a bogus token is 401", async () => {
    const token = await namespaceWithSA("auth");
    for (const path of ["/api", "/apis", "/api/v1", "/apis/kobun.dev/v1", "/version", "/healthz", "/readyz"]) {
      expect({ path, status: (await call(token, "GET", path)).status }).toEqual({ path, status: 200 });
    }
    expect((await call("bogus", "GET", "/api")).status).toBe(401);
    const denied = await call(token, "GET", "/api/v1/namespaces/auth/secrets");
    expect(denied.status).toBe(403);
    expect(denied.body.message).toContain('User "system:serviceaccount:auth:op"');
  });

  test("deleting the ServiceAccount invalidates its tokens", async () => {
    const token = await namespaceWithSA("gone");
    expect((await call(token, "GET", "/api")).status).toBe(200);
    await admin("DELETE", "/api/v1/namespaces/gone/serviceaccounts/op");
    expect((await call(token, "GET", "/api")).status).toBe(401);
  });
});

describe("RBAC", () => {
  let token: string;
  const ns = "team";
  beforeAll(async () => {
    token = await namespaceWithSA(ns);
    await admin("POST", "/api/v1/namespaces", { metadata: { name: "other" } });
    await admin("POST", `${RBAC}/namespaces/${ns}/roles`, {
      metadata: { name: "op" },
      rules: [
        { apiGroups: ["kobun.dev"], resources: ["kobunexamples"], verbs: ["get", "list", "watch", "patch"] },
        { apiGroups: ["kobun.dev"], resources: ["kobunexamples/status"], verbs: ["patch"] },
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get"], resourceNames: ["allowed"] },
      ],
    });
    await admin("POST", `${RBAC}/namespaces/${ns}/rolebindings`, {
      metadata: { name: "op" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "op" },
      subjects: [{ kind: "ServiceAccount", name: "op", namespace: ns }],
    });
    for (const n of ["a", "b"]) await admin("POST", EX(ns), { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: n }, spec: {} });
    for (const n of ["allowed", "other"]) await admin("POST", `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: n } });
  });

  test("get / list / watch / patch allowed by the Role", async () => {
    expect((await call(token, "GET", `${EX(ns)}/a`)).status).toBe(200);
    const list = await call(token, "GET", EX(ns));
    expect(list.status).toBe(200);
    expect(list.body.items.map((i: any) => i.metadata.name)).toEqual(["a", "b"]);
    const w = await WatchReader.open(sb, `${EX(ns)}?watch=true`, { headers: { authorization: `Bearer ${token}` } });
    expect(w.res.status).toBe(200);
    expect((await w.next()).type).toBe("ADDED");
    w.close();
    const p = await call(token, "PATCH", `${EX(ns)}/a`, { metadata: { labels: { x: "y" } } }, "application/merge-patch+json");
    expect(p.status).toBe(200);
    expect(p.body.metadata.labels).toEqual({ x: "y" });
  });

  test("denied verbs, namespaces and resources get the real 403", async () => {
    const create = await call(token, "POST", EX(ns), { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "c" } });
    expect(create.status).toBe(403);
    expect(create.body).toEqual({
      kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", reason: "Forbidden", code: 403,
      message: 'kobunexamples.kobun.dev is forbidden: User "system:serviceaccount:team:op" cannot create resource "kobunexamples" in API group "kobun.dev" in the namespace "team"',
      details: { group: "kobun.dev", kind: "kobunexamples" },
    });
    const del = await call(token, "DELETE", `${EX(ns)}/a`);
    expect(del.status).toBe(403);
    expect(del.body.message).toBe('kobunexamples.kobun.dev "a" is forbidden: User "system:serviceaccount:team:op" cannot delete resource "kobunexamples" in API group "kobun.dev" in the namespace "team"');
    expect(del.body.details).toEqual({ name: "a", group: "kobun.dev", kind: "kobunexamples" });
    const elsewhere = await call(token, "GET", EX("other"));
    expect(elsewhere.body.message).toBe('kobunexamples.kobun.dev is forbidden: User "system:serviceaccount:team:op" cannot list resource "kobunexamples" in API group "kobun.dev" in the namespace "other"');
    const watchAll = await call(token, "GET", "/apis/kobun.dev/v1/kobunexamples?watch=true");
    expect(watchAll.status).toBe(403);
    expect(watchAll.body.message).toBe('kobunexamples.kobun.dev is forbidden: User "system:serviceaccount:team:op" cannot watch resource "kobunexamples" in API group "kobun.dev" at the cluster scope');
    const secrets = await call(token, "GET", `/api/v1/namespaces/${ns}/secrets`);
    expect(secrets.body).toMatchObject({
      code: 403, details: { kind: "secrets" },
      message: 'secrets is forbidden: User "system:serviceaccount:team:op" cannot list resource "secrets" in API group "" in the namespace "team"',
    });
    const cr = await call(token, "GET", `${RBAC}/clusterroles/x`);
    expect(cr.body.message).toBe('clusterroles.rbac.authorization.k8s.io "x" is forbidden: User "system:serviceaccount:team:op" cannot get resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope');
    // authorization comes before routing: an unknown resource is 403, an unknown path too
    expect((await call(token, "GET", `/api/v1/namespaces/${ns}/nosuch`)).body.message).toBe('nosuch is forbidden: User "system:serviceaccount:team:op" cannot list resource "nosuch" in API group "" in the namespace "team"');
    expect((await call(token, "GET", "/foo")).body).toMatchObject({ code: 403, message: 'forbidden: User "system:serviceaccount:team:op" cannot get path "/foo"', details: {} });
    // the admin is unaffected
    expect((await admin("GET", `/api/v1/namespaces/${ns}/secrets`)).status).toBe(200);
  });

  test("the status subresource needs its own rule", async () => {
    const st = await call(token, "PATCH", `${EX(ns)}/a/status`, { status: { ok: true } }, "application/merge-patch+json");
    expect(st.status).toBe(200);
    expect(st.body.status).toEqual({ ok: true });
    const put = await call(token, "PUT", `${EX(ns)}/a/status`, st.body);
    expect(put.status).toBe(403);
    expect(put.body.message).toBe('kobunexamples.kobun.dev "a" is forbidden: User "system:serviceaccount:team:op" cannot update resource "kobunexamples/status" in API group "kobun.dev" in the namespace "team"');
    const sa = await call(token, "POST", `/api/v1/namespaces/${ns}/serviceaccounts/op/token`, { spec: {} });
    expect(sa.body.message).toBe('serviceaccounts "op" is forbidden: User "system:serviceaccount:team:op" cannot create resource "serviceaccounts/token" in API group "" in the namespace "team"');
    expect(sa.body.details).toEqual({ name: "op", kind: "serviceaccounts" });
  });

  test("resourceNames restrict to the named objects", async () => {
    expect((await call(token, "GET", `/api/v1/namespaces/${ns}/configmaps/allowed`)).status).toBe(200);
    const other = await call(token, "GET", `/api/v1/namespaces/${ns}/configmaps/other`);
    expect(other.status).toBe(403);
    expect(other.body.message).toBe('configmaps "other" is forbidden: User "system:serviceaccount:team:op" cannot get resource "configmaps" in API group "" in the namespace "team"');
    expect((await call(token, "GET", `/api/v1/namespaces/${ns}/configmaps`)).status).toBe(403);
  });

  test("RoleBinding → ClusterRole; ClusterRoleBinding; Group and User subjects; wildcards", async () => {
    const t2 = await namespaceWithSA("crns", "reader");
    expect((await call(t2, "GET", `/api/v1/namespaces/crns/configmaps`)).status).toBe(403);
    await admin("POST", `${RBAC}/clusterroles`, { metadata: { name: "cm-reader" }, rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["list"] }] });
    await admin("POST", `${RBAC}/namespaces/crns/rolebindings`, {
      metadata: { name: "r" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cm-reader" },
      subjects: [{ kind: "ServiceAccount", name: "reader" }],
    });
    expect((await call(t2, "GET", `/api/v1/namespaces/crns/configmaps`)).status).toBe(200);
    // a RoleBinding grants only in its namespace
    expect((await call(t2, "GET", `/api/v1/namespaces/default/configmaps`)).status).toBe(403);

    await admin("POST", `${RBAC}/clusterroles`, { metadata: { name: "all-status" }, rules: [{ apiGroups: ["*"], resources: ["*/status"], verbs: ["*"] }] });
    await admin("POST", `${RBAC}/clusterrolebindings`, {
      metadata: { name: "crns-all-status" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "all-status" },
      subjects: [{ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "system:serviceaccounts:crns" }],
    });
    expect((await call(t2, "GET", `${EX(ns)}/a/status`)).status).toBe(200);
    expect((await call(t2, "GET", `${EX(ns)}/a`)).status).toBe(403);

    await admin("POST", `${RBAC}/clusterroles`, { metadata: { name: "everything" }, rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }] });
    await admin("POST", `${RBAC}/clusterrolebindings`, {
      metadata: { name: "reader-everything" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "everything" },
      subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "system:serviceaccount:crns:reader" }],
    });
    expect((await call(t2, "GET", `/api/v1/secrets`)).status).toBe(200);
    expect((await call(t2, "DELETE", `/api/v1/namespaces/crns/configmaps`)).status).toBe(200);
  });

  test("a binding to a missing role adds the RBAC reason, as the real server does", async () => {
    const t3 = await namespaceWithSA("miss");
    await admin("POST", `${RBAC}/namespaces/miss/rolebindings`, {
      metadata: { name: "rb" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "missing" },
      subjects: [{ kind: "ServiceAccount", name: "op", namespace: "miss" }],
    });
    const r = await call(t3, "GET", "/api/v1/namespaces/miss/secrets");
    expect(r.body.message).toBe('secrets is forbidden: User "system:serviceaccount:miss:op" cannot list resource "secrets" in API group "" in the namespace "miss": rbac: RBAC: role.rbac.authorization.k8s.io "missing" not found');
  });

  test("no-token sandboxes stay all-powerful, yet still authorize service-account tokens", async () => {
    const open = await startSandbox();
    try {
      const o = (method: string, path: string, body?: unknown, token?: string) =>
        fetch(open.url + path, { method, headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
      expect((await o("GET", "/api/v1/namespaces/default/secrets")).status).toBe(200);
      await o("POST", "/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "sa" } });
      const tr = (await (await o("POST", "/api/v1/namespaces/default/serviceaccounts/sa/token", { spec: {} })).json()) as any;
      expect((await o("GET", "/api/v1/namespaces/default/secrets", undefined, tr.status.token)).status).toBe(403);
      expect((await o("GET", "/api/v1/namespaces/default/secrets", undefined, "whatever")).status).toBe(200);
    } finally {
      await open.stop();
    }
  });
});
