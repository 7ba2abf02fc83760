// kobun/sandbox's startSandbox() as kubectl and an operator author meet it, held to kube-apiserver v1.37 beyond
// test/e2e: CRD discovery, paging, selectors, watches, stale resourceVersions, delete preconditions, finalizers, dry
// runs, generation, SMP on a CR, SSA, cascades, namespaces, Status bodies. The real kubectl is the e2e suite's (built
// by test/cluster/build.sh before the suite runs; a unit test could run before it exists); the sandbox is this file's
// own, so it runs on the sandbox target only.

import { afterAll, beforeAll, expect, test as bunTest } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "kobun/sandbox";
import { within } from "../docs-blackbox/helpers.ts";
import { KUBECTL } from "./harness/kubectl.ts";
import { selectedTargets } from "./harness/target.ts";

const ON = selectedTargets().includes("sandbox");
const test = bunTest.skipIf(!ON);
const G = "bb.kobun.test", MERGE = "application/merge-patch+json", JSONP = "application/json-patch+json";
let sb: Sandbox, home: string, seq = 0;

async function api(method: string, path: string, body?: unknown, type = "application/json") {
  const r = await fetch(sb.url + path, { method, headers: { "content-type": type }, signal: AbortSignal.timeout(10_000),
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
  const text = await r.text();
  try { return { status: r.status, body: JSON.parse(text) }; } catch { return { status: r.status, body: text as any }; }
}

async function kubectl(args: string[], stdin?: string) {
  const p = Bun.spawn([KUBECTL, "--kubeconfig", sb.kubeconfigPath, "--request-timeout=10s", ...args], {
    env: { HOME: home, PATH: "/usr/bin:/bin" }, stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
    stdout: "pipe", stderr: "pipe" });
  const all = Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  const [out, err, code] = await within(all, 20_000, `kubectl ${args}`).catch((e) => { p.kill(); throw e; });
  return { code, out, err };
}

/** The events of a watch until `done(events)` holds; ends the stream after; fails after 10 s. */
async function watch(path: string, done: (evs: any[]) => boolean): Promise<any[]> {
  const ctl = new AbortController();
  const evs: any[] = [];
  const read = (async () => {
    let buf = "";
    for await (const chunk of (await fetch(sb.url + path, { signal: ctl.signal })).body!) {
      const lines = (buf += Buffer.from(chunk).toString()).split("\n");
      buf = lines.pop()!;
      evs.push(...lines.filter((l) => l.trim()).map((l) => JSON.parse(l)));
      if (done(evs)) return evs;
    }
    throw new Error("the watch ended");
  })();
  try { return await within(read, 10_000, `watch ${path}`); } catch (e) {
    throw new Error(`${(e as Error).message}; saw ${JSON.stringify(evs.map((x) => [x.type, x.object?.metadata]))}`);
  } finally { ctl.abort(); }
}

async function mkns(tag: string): Promise<string> {
  const name = `bb-${tag}-${++seq}-${Math.random().toString(36).slice(2, 7)}`;
  expect((await api("POST", "/api/v1/namespaces", { metadata: { name } })).status).toBe(201);
  return name;
}
const cm = (name: string, meta: any = {}) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, ...meta } });
const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const cr = (plural: string) => (ns: string) => `/apis/${G}/v1/namespaces/${ns}/${plural}`;
const widgets = cr("widgets"), gizmos = cr("gizmos");
const widget = (name: string, spec = {}, meta = {}) =>
  ({ apiVersion: `${G}/v1`, kind: "Widget", metadata: { name, ...meta }, spec });
const open = { type: "object", "x-kubernetes-preserve-unknown-fields": true };
const crd = (plural: string, kind: string, status: boolean, names: any = {}) => ({
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: `${plural}.${G}` },
  spec: { group: G, scope: "Namespaced", names: { plural, kind, singular: kind.toLowerCase(), ...names },
    versions: [{ name: "v1", served: true, storage: true, ...(status ? { subresources: { status: {} } } : {}),
      schema: { openAPIV3Schema: { type: "object", properties: { spec: open, status: open } } } }] },
});
async function install(c: ReturnType<typeof crd>) {
  expect((await api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", c)).status).toBe(201);
  const established = ["wait", "--for=condition=Established", "--timeout=15s", `crd/${c.metadata.name}`];
  expect(await kubectl(established)).toMatchObject({ code: 0 });
}

beforeAll(async () => {
  if (!ON) return;
  home = mkdtempSync(join(tmpdir(), "bb-kubectl-home-"));
  sb = await startSandbox();
  for (const c of [crd("widgets", "Widget", true), crd("gizmos", "Gizmo", false)]) await install(c);
}, 60_000);
afterAll(async () => { await sb?.stop(); if (home) rmSync(home, { recursive: true, force: true }); });

test("api-resources shows a CRD's short name, categories, verbs; get takes both; gone with the CRD", async () => {
  await install(crd("things", "Thing", true, { shortNames: ["thg"], categories: ["bbcat"] }));
  const ns = await mkns("disc");
  const line = (await kubectl(["api-resources", "-o", "wide"])).out.split("\n").find((l) => l.startsWith("things "));
  expect(line?.split(/\s+/).slice(0, 5)).toEqual(["things", "thg", `${G}/v1`, "true", "Thing"]);
  expect(line).toMatch(/deletecollection.*bbcat/);
  expect((await api("POST", cr("things")(ns), { ...widget("t1"), kind: "Thing" })).status).toBe(201);
  expect((await kubectl(["get", "thg", "-n", ns, "-o", "name"])).out).toBe(`thing.${G}/t1\n`);
  expect((await kubectl(["get", "bbcat", "-n", ns, "-o", "name"])).out).toBe(`thing.${G}/t1\n`);
  expect((await kubectl(["delete", "crd", `things.${G}`, "--timeout=20s"])).code).toBe(0);
  const gone = await kubectl(["get", `things.${G}`, "-n", ns]);
  expect(gone).toMatchObject({ code: 1, err: expect.stringContaining(`doesn't have a resource type "things"`) });
}, 60_000);

test("paging: limit/continue pages are one snapshot (an object made between pages is not in them)", async () => {
  const ns = await mkns("page");
  for (const n of ["a", "b", "c", "d", "e"]) expect((await api("POST", cms(ns), cm(n))).status).toBe(201);
  const page = (cont = "") => api("GET", `${cms(ns)}?limit=2${cont && `&continue=${encodeURIComponent(cont)}`}`);
  const p1 = await page();
  expect(p1.body.items.map((o: any) => o.metadata.name)).toEqual(["a", "b"]);
  expect(p1.body.metadata.remainingItemCount).toBe(3);
  expect((await api("POST", cms(ns), cm("zz"))).status).toBe(201);
  const p2 = await page(p1.body.metadata.continue);
  const p3 = await page(p2.body.metadata.continue);
  expect(p2.body.metadata.resourceVersion).toBe(p1.body.metadata.resourceVersion);
  const all = await kubectl(["get", "cm", "-n", ns, "--chunk-size=2", "-o", "name"]);
  expect(all.out.trim().split("\n")).toEqual(["a", "b", "c", "d", "e", "zz"].map((n) => `configmap/${n}`));
  expect([...p2.body.items, ...p3.body.items].map((o: any) => o.metadata.name)).toEqual(["c", "d", "e"]);
  expect(p3.body.metadata.continue ?? "").toBe("");
}, 30_000);

test("set-based label selectors and field selectors; an unsupported field label is a 400 BadRequest", async () => {
  const ns = await mkns("sel");
  const labels: Record<string, any> = { p: { tier: "a" }, q: { tier: "b", legacy: "y" }, r: { tier: "c" }, s: {} };
  for (const [n, l] of Object.entries(labels)) await api("POST", cms(ns), cm(n, { labels: l }));
  const get = async (...a: string[]) => (await kubectl(["get", "cm", "-n", ns, "-o", "name", ...a])).out.trim();
  expect(await get("-l", "tier in (a,b),!legacy")).toBe("configmap/p");
  expect(await get("-l", "tier notin (a),tier")).toBe("configmap/q\nconfigmap/r");
  expect(await get("--field-selector", "metadata.name!=p,metadata.name!=q", "-l", "!legacy"))
    .toBe("configmap/r\nconfigmap/s");
  const bad = await api("GET", `${cms(ns)}?fieldSelector=data.x%3D1`);
  expect([bad.status, bad.body.reason]).toEqual([400, "BadRequest"]);
  expect(bad.body.message).toBe(`"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"`);
}, 30_000);

test("a watch from a list's resourceVersion: later events only; leaving its selector is DELETED", async () => {
  const ns = await mkns("watch");
  await api("POST", cms(ns), cm("before", { labels: { w: "1" } }));
  const rv = (await api("GET", cms(ns))).body.metadata.resourceVersion;
  await api("POST", cms(ns), cm("o", { labels: { w: "1" } }));
  await api("PATCH", `${cms(ns)}/o`, { metadata: { labels: { w: null } } }, MERGE);
  await api("PATCH", `${cms(ns)}/o`, { metadata: { labels: { w: "1" } } }, MERGE);
  await api("DELETE", `${cms(ns)}/o`);
  const evs = await watch(`${cms(ns)}?watch=1&labelSelector=w%3D1&resourceVersion=${rv}`, (e) => e.length >= 4);
  expect(evs.map((e) => `${e.type} ${e.object.metadata.name}`))
    .toEqual(["ADDED o", "DELETED o", "ADDED o", "DELETED o"]);
  const rvs = evs.map((e) => BigInt(e.object.metadata.resourceVersion));
  expect(rvs.every((v, i) => i === 0 || v > rvs[i - 1]!)).toBe(true);
}, 30_000);

test("stale resourceVersion: label --resource-version is 409; PUT without one: ConfigMap 200, CR 422", async () => {
  const ns = await mkns("rv");
  const old = (await api("POST", cms(ns), cm("c"))).body.metadata.resourceVersion;
  await api("PATCH", `${cms(ns)}/c`, { data: { x: "1" } }, MERGE);
  const stale = await kubectl(["label", "cm", "c", "-n", ns, "a=b", `--resource-version=${old}`]);
  const why = `Operation cannot be fulfilled on configmaps "c": the object has been modified`;
  expect(stale).toMatchObject({ code: 1, err: expect.stringContaining(why) });
  expect((await api("PUT", `${cms(ns)}/c`, { ...cm("c"), data: { y: "2" } })).status).toBe(200);
  expect((await api("POST", widgets(ns), widget("w", { n: 1 }))).status).toBe(201);
  const put = await api("PUT", `${widgets(ns)}/w`, widget("w", { n: 2 }));
  expect([put.status, put.body.reason]).toEqual([422, "Invalid"]);
  expect(put.body.message).toContain("metadata.resourceVersion: Invalid value: 0: must be specified for an update");
}, 30_000);

test("delete preconditions: a stale resourceVersion or another uid is 409 Conflict; the object stays", async () => {
  const ns = await mkns("pre");
  const { uid, resourceVersion: rv } = (await api("POST", cms(ns), cm("c"))).body.metadata;
  const now = (await api("PATCH", `${cms(ns)}/c`, { data: { x: "1" } }, MERGE)).body.metadata.resourceVersion;
  const byRv = await api("DELETE", `${cms(ns)}/c`, { preconditions: { resourceVersion: rv } });
  const nil = "00000000-0000-0000-0000-000000000000";
  const byUid = await api("DELETE", `${cms(ns)}/c`, { preconditions: { uid: nil } });
  expect([byRv.status, byRv.body.reason, byUid.status, byUid.body.reason]).toEqual([409, "Conflict", 409, "Conflict"]);
  expect((await api("GET", `${cms(ns)}/c`)).status).toBe(200);
  expect((await api("DELETE", `${cms(ns)}/c`, { preconditions: { uid } })).status).toBe(200);
  const failed = `Operation cannot be fulfilled on ConfigMap "c": the`;
  expect(byRv.body.message).toBe(`${failed} ResourceVersion in the precondition (${rv}) does not match the`
    + ` ResourceVersion in record (${now}). The object might have been modified`);
  expect(byUid.body.message).toBe(`${failed} UID in the precondition (${nil}) does not match the UID in record`
    + ` (${uid}). The object might have been deleted and then recreated`);
}, 30_000);

test("a finalizer holds a deleted CR (a dry run does not): deletionTimestamp, grace 0, generation+1", async () => {
  const ns = await mkns("fin");
  expect((await api("POST", widgets(ns), widget("w", {}, { finalizers: [`${G}/hold`] }))).status).toBe(201);
  const dry = await kubectl(["delete", `widgets.${G}`, "w", "-n", ns, "--dry-run=server"]);
  expect(dry.out).toBe(`widget.${G} "w" deleted from ${ns} namespace (server dry run)\n`);
  expect((await api("GET", `${widgets(ns)}/w`)).body.metadata.deletionTimestamp).toBeUndefined();
  const del = await kubectl(["delete", `widgets.${G}`, "w", "-n", ns, "--wait=false"]);
  expect(del.out).toBe(`widget.${G} "w" deleted from ${ns} namespace\n`);
  const held = (await api("GET", `${widgets(ns)}/w`)).body.metadata;
  expect([typeof held.deletionTimestamp, held.deletionGracePeriodSeconds, held.generation]).toEqual(["string", 0, 2]);
  const again = await api("DELETE", `${widgets(ns)}/w`);
  expect([again.status, again.body.metadata?.deletionTimestamp]).toEqual([200, held.deletionTimestamp]);
  await api("PATCH", `${widgets(ns)}/w`, [{ op: "remove", path: "/metadata/finalizers" }], JSONP);
  await watch(`${widgets(ns)}?watch=1&resourceVersion=${held.resourceVersion}`, (e) => e.at(-1).type === "DELETED");
  expect((await api("GET", `${widgets(ns)}/w`)).status).toBe(404);
}, 30_000);

test("generation: status counts as spec without a status subresource; metadata never; --subresource", async () => {
  const ns = await mkns("gen");
  await api("POST", gizmos(ns), { apiVersion: `${G}/v1`, kind: "Gizmo", metadata: { name: "g" }, spec: { a: 1 } });
  const gen = async () => (await api("GET", `${gizmos(ns)}/g`)).body.metadata.generation;
  for (const verb of ["label", "annotate"]) await kubectl([verb, `gizmos.${G}`, "g", "-n", ns, "x=y"]);
  expect(await gen()).toBe(1);
  await kubectl(["patch", `gizmos.${G}`, "g", "-n", ns, "--type=merge", "-p", '{"status":{"ok":true}}']);
  expect(await gen()).toBe(2);
  await api("POST", widgets(ns), widget("w", { a: 1 }));
  const st = await kubectl(["patch", `widgets.${G}`, "w", "-n", ns, "--subresource=status", "--type=merge",
    "-p", '{"status":{"ok":true},"spec":{"a":2}}']);
  expect(st.out).toBe(`widget.${G}/w patched\n`);
  const w = (await api("GET", `${widgets(ns)}/w`)).body;
  expect([w.status, w.spec, w.metadata.generation]).toEqual([{ ok: true }, { a: 1 }, 1]);
}, 30_000);

test("kubectl patch of a custom resource: strategic merge is 415, a merge patch goes through", async () => {
  const ns = await mkns("smp");
  await api("POST", widgets(ns), widget("w", { a: 1 }));
  const patch = (...a: string[]) => kubectl(["patch", `widgets.${G}`, "w", "-n", ns, ...a]);
  const smp = await patch("-p", '{"spec":{"a":2}}');
  expect(smp).toMatchObject({ code: 1, err: expect.stringContaining("strategic-merge-patch+json is not supported") });
  const raw = await api("PATCH", `${widgets(ns)}/w`, { spec: { a: 2 } }, "application/strategic-merge-patch+json");
  expect([raw.status, raw.body.reason]).toEqual([415, "UnsupportedMediaType"]);
  expect((await patch("--type=merge", "-p", '{"spec":{"a":3}}')).code).toBe(0);
}, 30_000);

test("server-side apply: a conflict's Status names manager and field; a dropped field goes unless shared", async () => {
  const ns = await mkns("ssa");
  const apply = (mgr: string, data: object) =>
    api("PATCH", `${cms(ns)}/s?fieldManager=${mgr}`, { ...cm("s"), data }, "application/apply-patch+yaml");
  expect((await apply("one", { a: "1", b: "1", c: "1" })).status).toBe(201);
  const clash = await apply("two", { a: "2" });
  expect([clash.status, clash.body.reason]).toEqual([409, "Conflict"]);
  expect(clash.body.details.causes)
    .toEqual([{ reason: "FieldManagerConflict", message: 'conflict with "one"', field: ".data.a" }]);
  expect((await apply("two", { b: "1" })).status).toBe(200); // the same value: shared, no conflict
  const after = await apply("one", { c: "1" });
  expect(after.body.data).toEqual({ b: "1", c: "1" }); // a dropped, b kept by "two"
  const owners = after.body.metadata.managedFields.map((m: any) => [m.manager, Object.keys(m.fieldsV1["f:data"])]);
  expect(owners.sort()).toEqual([["one", ["f:c"]], ["two", ["f:b"]]]);
}, 30_000);

test("--cascade=foreground keeps the owner until a blocking dependent is gone; --cascade=orphan unlinks", async () => {
  const ns = await mkns("gc");
  const owner = (await api("POST", cms(ns), cm("owner"))).body;
  const ref = { apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata.uid, blockOwnerDeletion: true };
  await api("POST", cms(ns), cm("kid", { ownerReferences: [ref], finalizers: [`${G}/hold`] }));
  await api("POST", cms(ns), cm("free", { ownerReferences: [ref] }));
  const rv = (await api("GET", cms(ns))).body.metadata.resourceVersion;
  expect((await kubectl(["delete", "cm", "owner", "-n", ns, "--cascade=foreground", "--wait=false"])).code).toBe(0);
  const is = (x: any, type: string, name: string) => x.type === type && x.object.metadata.name === name;
  await watch(`${cms(ns)}?watch=1&resourceVersion=${rv}`, (e) => e.some((x) => is(x, "DELETED", "free"))
    && e.some((x) => is(x, "MODIFIED", "kid") && x.object.metadata.deletionTimestamp));
  const held = (await api("GET", `${cms(ns)}/owner`)).body.metadata;
  expect([held.finalizers, typeof held.deletionTimestamp]).toEqual([["foregroundDeletion"], "string"]);
  await api("PATCH", `${cms(ns)}/kid`, { metadata: { finalizers: null } }, MERGE);
  await watch(`${cms(ns)}?watch=1&resourceVersion=${rv}`, (e) => e.some((x) => is(x, "DELETED", "owner")));
  const o2 = (await api("POST", cms(ns), cm("o2"))).body.metadata;
  const ref2 = { apiVersion: "v1", kind: "ConfigMap", name: "o2", uid: o2.uid };
  await api("POST", cms(ns), cm("k2", { ownerReferences: [ref2] }));
  expect((await kubectl(["delete", "cm", "o2", "-n", ns, "--cascade=orphan"])).code).toBe(0);
  const k2 = await watch(`${cms(ns)}?watch=1&fieldSelector=metadata.name%3Dk2`,
    (e) => !e.at(-1).object.metadata.ownerReferences?.length);
  expect(k2.at(-1).object.metadata).not.toHaveProperty("ownerReferences"); // omitempty: no `[]` on the wire
}, 30_000);

test("namespace deletion: Terminating while content is held, new content refused 403; then gone", async () => {
  const ns = await mkns("nsdel");
  await api("POST", cms(ns), cm("held", { finalizers: [`${G}/hold`] }));
  const fresh = (await api("GET", `/api/v1/namespaces/${ns}`)).body;
  expect((await kubectl(["delete", "ns", ns, "--wait=false"])).code).toBe(0);
  const byName = `/api/v1/namespaces?watch=1&fieldSelector=metadata.name%3D${ns}`;
  const term = await watch(byName, (e) => e.at(-1)?.object.status?.phase === "Terminating");
  const refused = await api("POST", cms(ns), cm("late"));
  expect([refused.status, refused.body.reason]).toEqual([403, "Forbidden"]);
  expect(refused.body.message).toBe(`configmaps "late" is forbidden: unable to create new content in namespace ${ns}`
    + " because it is being terminated");
  await api("PATCH", `${cms(ns)}/held`, { metadata: { finalizers: null } }, MERGE);
  const rv = term.at(-1).object.metadata.resourceVersion;
  await watch(`${byName}&resourceVersion=${rv}`, (e) => e.some((x) => x.type === "DELETED"));
  expect(fresh.metadata.labels).toEqual({ "kubernetes.io/metadata.name": ns });
  expect(fresh.spec).toEqual({ finalizers: ["kubernetes"] });
  expect(refused.body.details).toEqual({ name: "late", kind: "configmaps", causes: [{ reason: "NamespaceTerminating",
    message: `namespace ${ns} is being terminated`, field: "metadata.namespace" }] });
}, 30_000);

test("the namespaces kube-apiserver makes for itself: default, kube-node-lease, kube-public, kube-system", async () => {
  const names = (await kubectl(["get", "ns", "-o", "name"])).out.split("\n");
  const own = ["default", "kube-node-lease", "kube-public", "kube-system"].map((n) => `namespace/${n}`);
  expect(names).toEqual(expect.arrayContaining(own));
}, 30_000);

test("Status bodies: a bad name 422 with its cause, bad JSON 400, a failed test op 422; immutable data", async () => {
  const ns = await mkns("status");
  const bad = await api("POST", cms(ns), cm("Bad_Name"));
  expect([bad.status, bad.body.kind, bad.body.status, bad.body.reason]).toEqual([422, "Status", "Failure", "Invalid"]);
  expect(bad.body.details).toMatchObject({ name: "Bad_Name", kind: "ConfigMap",
    causes: [{ reason: "FieldValueInvalid", field: "metadata.name", message: expect.any(String) }] });
  const junk = await api("POST", cms(ns), "{not json");
  expect([junk.status, junk.body.kind, junk.body.reason]).toEqual([400, "Status", "BadRequest"]);
  await api("POST", cms(ns), { ...cm("frozen"), immutable: true, data: { a: "1" } });
  const t = await api("PATCH", `${cms(ns)}/frozen`, [{ op: "test", path: "/data/a", value: "9" }], JSONP);
  expect([t.status, t.body.reason]).toEqual([422, "Invalid"]);
  const imm = await api("PATCH", `${cms(ns)}/frozen`, { data: { a: "2" } }, MERGE);
  expect([imm.status, imm.body.reason]).toEqual([422, "Invalid"]);
  expect(imm.body.details.causes[0]).toMatchObject({ reason: "FieldValueForbidden", field: "data" });
  expect((await api("GET", `${cms(ns)}/frozen`)).body.data).toEqual({ a: "1" });
}, 30_000);
