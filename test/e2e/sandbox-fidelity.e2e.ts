// Details where the sandbox once differed from kube-apiserver, held to the real one on both targets:
// paged lists served as one snapshot, the wording of an unknown field selector, a PUT without a
// resourceVersion, failed delete preconditions, empty fields left out (an orphan's ownerReferences,
// a 404's group), what a Namespace gets (its name label, the "kubernetes" finalizer, the system
// namespaces) and the 403s of a terminating one and of deleting the immortal ones, and immutable ConfigMaps and Secrets.
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./sandbox-fidelity.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createNamespace, eventually, EXAMPLES, rawRequest, uniqueName } from "./harness/kube.ts";
import { ROOT } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const MERGE = "application/merge-patch+json";
const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const examples = (ns: string) => `/apis/kobun.dev/v1/namespaces/${ns}/kobunexamples`;
const cm = (name: string, meta: object = {}) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, ...meta } });
const example = (name: string) => ({ apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name }, spec: {} });

describe.each(selectedTargets())("sandbox fidelity on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "handlers/kobunexample.crd.yaml")], cleanup: [EXAMPLES] });
  /** a request and its JSON answer */
  const api = async (t: Target, method: string, path: string, body?: unknown, type?: string) => {
    const response = await rawRequest(t.client, method, path, body, type);
    return { status: response.status, body: (await response.json()) as any };
  };
  const names = (list: any) => list.body.items.map((o: any) => o.metadata.name);

  test("a paged list is one snapshot: later pages are served at the first page's resourceVersion", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    for (const n of ["a", "b", "c", "d", "e"]) expect((await api(t, "POST", cms(ns), cm(n))).status).toBe(201);
    const page = (cont = "") => api(t, "GET", `${cms(ns)}?limit=2${cont && `&continue=${encodeURIComponent(cont)}`}`);
    const p1 = await page();
    expect([names(p1), p1.body.metadata.remainingItemCount]).toEqual([["a", "b"], 3]);
    // between the pages: one made, one changed, one deleted
    expect((await api(t, "POST", cms(ns), cm("zz"))).status).toBe(201);
    expect((await api(t, "PATCH", `${cms(ns)}/d`, { data: { x: "1" } }, MERGE)).status).toBe(200);
    expect((await api(t, "DELETE", `${cms(ns)}/e`)).status).toBe(200);
    const p2 = await page(p1.body.metadata.continue);
    const p3 = await page(p2.body.metadata.continue);
    expect([names(p2), names(p3), p3.body.metadata.continue]).toEqual([["c", "d"], ["e"], undefined]);
    expect([p2.body.metadata.resourceVersion, p3.body.metadata.resourceVersion])
      .toEqual([p1.body.metadata.resourceVersion, p1.body.metadata.resourceVersion]);
    expect(p2.body.items[1].data).toBeUndefined(); // d as it was then
    expect(names(await api(t, "GET", cms(ns)))).toEqual(["a", "b", "c", "d", "zz"]);
  }, 60_000);

  test("an unknown field selector is a 400 in the words of the kind's field-label conversion", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const refused = async (path: string, selector: string) => {
      const r = await api(t, "GET", `${path}?fieldSelector=${encodeURIComponent(selector)}`);
      return [r.status, r.body.reason, r.body.message];
    };
    const only = `is not a known field selector: only "metadata.name", "metadata.namespace"`;
    expect(await refused(cms(ns), "data.x=1")).toEqual([400, "BadRequest", `"data.x" ${only}`]);
    expect(await refused(`/api/v1/namespaces/${ns}/secrets`, "data.x=1"))
      .toEqual([400, "BadRequest", "field label not supported: data.x"]);
    expect(await refused(examples(ns), "spec.x=1")).toEqual([400, "BadRequest", "field label not supported: spec.x"]);
    expect(await refused("/api/v1/namespaces", "metadata.namespace=x"))
      .toEqual([400, "BadRequest", "field label not supported: metadata.namespace"]);
    // the fields those kinds do take
    const byType = await api(t, "GET", `/api/v1/namespaces/${ns}/secrets?fieldSelector=type%3DOpaque`);
    const byPhase = await api(t, "GET", `/api/v1/namespaces?fieldSelector=status.phase%3DActive,metadata.name%3D${ns}`);
    expect([byType.status, byPhase.status, names(byPhase)]).toEqual([200, 200, [ns]]);
  }, 60_000);

  test("a PUT without a resourceVersion: a ConfigMap takes it, a custom resource and a CRD answer 422", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    expect((await api(t, "POST", cms(ns), cm("c"))).status).toBe(201);
    expect((await api(t, "PUT", `${cms(ns)}/c`, { ...cm("c"), data: { y: "2" } })).status).toBe(200);
    expect((await api(t, "POST", examples(ns), example("w"))).status).toBe(201);
    const put = await api(t, "PUT", `${examples(ns)}/w`, { ...example("w"), spec: { n: 2 } });
    const detail = "Invalid value: 0: must be specified for an update";
    expect([put.status, put.body.reason, put.body.message, put.body.details]).toEqual([422, "Invalid",
      `kobunexamples.kobun.dev "w" is invalid: metadata.resourceVersion: ${detail}`,
      { name: "w", group: "kobun.dev", kind: "kobunexamples",
        causes: [{ reason: "FieldValueInvalid", message: detail, field: "metadata.resourceVersion" }] }]);
    const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/kobunexamples.kobun.dev";
    const { metadata: { resourceVersion: _rv, ...meta }, ...crd } = (await api(t, "GET", crdPath)).body;
    const crdPut = await api(t, "PUT", crdPath, { ...crd, metadata: meta });
    expect([crdPut.status, crdPut.body.message]).toEqual([422, "customresourcedefinitions.apiextensions.k8s.io " +
      `"kobunexamples.kobun.dev" is invalid: metadata.resourceVersion: ${detail}`]);
    // a stale one: the conflict names the resource
    const stale = await api(t, "PUT", `${cms(ns)}/c`, { ...cm("c", { resourceVersion: "1" }), data: { z: "3" } });
    expect([stale.status, stale.body.message, stale.body.details]).toEqual([409, `Operation cannot be fulfilled on `
      + `configmaps "c": the object has been modified; please apply your changes to the latest version and try again`,
    { name: "c", kind: "configmaps" }]);
  }, 60_000);

  test("a failed delete precondition is a 409 naming the kind (a Namespace's: the resource, older words)", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const { uid, resourceVersion: rv } = (await api(t, "POST", cms(ns), cm("c"))).body.metadata;
    const now = (await api(t, "PATCH", `${cms(ns)}/c`, { data: { x: "1" } }, MERGE)).body.metadata.resourceVersion;
    const nil = "00000000-0000-0000-0000-000000000000";
    const del = async (path: string, preconditions: object) => {
      const r = await api(t, "DELETE", path, { preconditions });
      return [r.status, r.body.reason, r.body.message, r.body.details];
    };
    const onCm = `Operation cannot be fulfilled on ConfigMap "c": the`;
    expect(await del(`${cms(ns)}/c`, { resourceVersion: rv })).toEqual([409, "Conflict", `${onCm} ResourceVersion in `
      + `the precondition (${rv}) does not match the ResourceVersion in record (${now}). The object might have been `
      + "modified", { name: "c", kind: "ConfigMap" }]);
    expect(await del(`${cms(ns)}/c`, { uid: nil })).toEqual([409, "Conflict", `${onCm} UID in the precondition `
      + `(${nil}) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
    { name: "c", kind: "ConfigMap" }]);
    const w = (await api(t, "POST", examples(ns), example("w"))).body.metadata;
    expect(await del(`${examples(ns)}/w`, { uid: nil })).toEqual([409, "Conflict", "Operation cannot be fulfilled "
      + `on KobunExample.kobun.dev "w": the UID in the precondition (${nil}) does not match the UID in record `
      + `(${w.uid}). The object might have been deleted and then recreated`,
    { name: "w", group: "kobun.dev", kind: "KobunExample" }]);
    const nsMeta = (await api(t, "GET", `/api/v1/namespaces/${ns}`)).body.metadata;
    expect(await del(`/api/v1/namespaces/${ns}`, { uid: nil })).toEqual([409, "Conflict", "Operation cannot be "
      + `fulfilled on namespaces "${ns}": Precondition failed: UID in precondition: ${nil}, UID in object meta: `
      + nsMeta.uid, { name: ns, kind: "namespaces" }]);
    expect((await api(t, "GET", `${cms(ns)}/c`)).status).toBe(200);
    expect((await api(t, "DELETE", `${cms(ns)}/c`, { preconditions: { uid, resourceVersion: now } })).status)
      .toBe(200);
  }, 60_000);

  test("empty fields are left out: an orphan's ownerReferences, a 404's group", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const owner = (await api(t, "POST", cms(ns), cm("owner"))).body.metadata;
    const ref = { apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.uid };
    expect((await api(t, "POST", cms(ns), cm("kid", { ownerReferences: [ref] }))).status).toBe(201);
    expect((await api(t, "DELETE", `${cms(ns)}/owner`, { propagationPolicy: "Orphan" })).status).toBe(200);
    const kid = await eventually("the dependent orphaned", async () => {
      const got = (await api(t, "GET", `${cms(ns)}/kid`)).body;
      return got.metadata.ownerReferences?.length ? undefined : got;
    }, { timeoutMs: 30_000, intervalMs: 100 });
    expect(kid.metadata).not.toHaveProperty("ownerReferences");
    const missing = await api(t, "GET", `${cms(ns)}/nope`);
    expect([missing.status, missing.body.details]).toEqual([404, { name: "nope", kind: "configmaps" }]);
    const missingCr = await api(t, "GET", `${examples(ns)}/nope`);
    expect(missingCr.body.details).toEqual({ name: "nope", group: "kobun.dev", kind: "kobunexamples" });
  }, 60_000);

  test("Namespaces: the name label, the kubernetes finalizer, the system ones, the 403 while terminating", async () => {
    const t = need();
    for (const name of ["default", "kube-system", "kube-public", "kube-node-lease"]) {
      const got = await api(t, "GET", `/api/v1/namespaces/${name}`);
      expect([got.status, got.body.metadata.labels]).toEqual([200, { "kubernetes.io/metadata.name": name }]);
    }
    const ns = await createNamespace(t.client, "e2e-fidelity", { a: "b" });
    const fresh = (await api(t, "GET", `/api/v1/namespaces/${ns}`)).body;
    expect([fresh.metadata.labels, fresh.spec]).toEqual([{ a: "b", "kubernetes.io/metadata.name": ns },
      { finalizers: ["kubernetes"] }]);
    // an update neither drops the label nor changes the finalizers
    const put = await api(t, "PUT", `/api/v1/namespaces/${ns}`, { ...fresh, metadata: { ...fresh.metadata, labels: {} },
      spec: { finalizers: ["other"] } });
    expect([put.status, put.body.metadata.labels, put.body.spec]).toEqual([200,
      { "kubernetes.io/metadata.name": ns }, { finalizers: ["kubernetes"] }]);
    const hold = "e2e.kobun.dev/hold";
    expect((await api(t, "POST", cms(ns), cm("held", { finalizers: [hold] }))).status).toBe(201);
    expect((await api(t, "DELETE", `/api/v1/namespaces/${ns}`)).status).toBe(200);
    const refused = await api(t, "POST", cms(ns), cm("late"));
    expect([refused.status, refused.body.reason, refused.body.message, refused.body.details]).toEqual([403,
      "Forbidden", `configmaps "late" is forbidden: unable to create new content in namespace ${ns} because it is `
      + "being terminated", { name: "late", kind: "configmaps", causes: [{ reason: "NamespaceTerminating",
        message: `namespace ${ns} is being terminated`, field: "metadata.namespace" }] }]);
    await eventually("the held ConfigMap marked", async () =>
      (await api(t, "GET", `${cms(ns)}/held`)).body.metadata.deletionTimestamp, { timeoutMs: 30_000 });
    expect((await api(t, "PATCH", `${cms(ns)}/held`, { metadata: { finalizers: null } }, MERGE)).status).toBe(200);
    await eventually("the namespace gone", async () =>
      (await api(t, "GET", `/api/v1/namespaces/${ns}`)).status === 404, { timeoutMs: 45_000, intervalMs: 100 });
  }, 90_000);

  test("default, kube-system and kube-public may not be deleted (403, a dry run too); kube-node-lease may", async () => {
    const t = need();
    for (const name of ["default", "kube-system", "kube-public"]) {
      for (const query of ["", "?dryRun=All"]) {
        const refused = await api(t, "DELETE", `/api/v1/namespaces/${name}${query}`);
        expect([refused.status, refused.body.reason, refused.body.message, refused.body.details]).toEqual([403,
          "Forbidden", `namespaces "${name}" is forbidden: this namespace may not be deleted`,
          { name, kind: "namespaces" }]);
      }
      expect((await api(t, "GET", `/api/v1/namespaces/${name}`)).body.metadata.deletionTimestamp).toBeUndefined();
    }
    // DeleteOptions are judged before: a bad propagationPolicy is still a 422
    const bad = await api(t, "DELETE", "/api/v1/namespaces/default?propagationPolicy=Foo");
    expect([bad.status, bad.body.reason]).toEqual([422, "Invalid"]);
    const lease = await api(t, "DELETE", "/api/v1/namespaces/kube-node-lease?dryRun=All");
    expect([lease.status, lease.body.status.phase]).toEqual([200, "Terminating"]);
  }, 60_000);

  test("an immutable ConfigMap or Secret keeps its data and stays immutable: 422 FieldValueForbidden", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const forbidden = (field: string) =>
      ({ reason: "FieldValueForbidden", message: "Forbidden: field is immutable when `immutable` is set", field });
    const name = uniqueName("frozen");
    expect((await api(t, "POST", cms(ns), { ...cm(name), immutable: true, data: { a: "1" } })).status).toBe(201);
    const data = await api(t, "PATCH", `${cms(ns)}/${name}`, { data: { a: "2" } }, MERGE);
    expect([data.status, data.body.reason, data.body.message, data.body.details]).toEqual([422, "Invalid",
      `ConfigMap "${name}" is invalid: data: Forbidden: field is immutable when \`immutable\` is set`,
      { name, kind: "ConfigMap", causes: [forbidden("data")] }]);
    const thaw = await api(t, "PATCH", `${cms(ns)}/${name}`, { immutable: false, data: { b: "2" } }, MERGE);
    expect([thaw.status, thaw.body.details.causes]).toEqual([422, [forbidden("immutable"), forbidden("data")]]);
    const labelled = await api(t, "PATCH", `${cms(ns)}/${name}`, { metadata: { labels: { l: "1" } } }, MERGE);
    expect([labelled.status, labelled.body.data]).toEqual([200, { a: "1" }]);
    const secrets = `/api/v1/namespaces/${ns}/secrets`;
    const secret = { apiVersion: "v1", kind: "Secret", metadata: { name }, immutable: true, data: { a: "MQ==" } };
    expect((await api(t, "POST", secrets, secret)).status).toBe(201);
    const changed = await api(t, "PATCH", `${secrets}/${name}`, { stringData: { a: "2" } }, MERGE);
    expect([changed.status, changed.body.details?.causes]).toEqual([422, [forbidden("data")]]);
  }, 60_000);
});
