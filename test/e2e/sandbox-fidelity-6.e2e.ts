// More details where the sandbox once differed from kube-apiserver (after sandbox-fidelity.e2e.ts to -5), held to
// the real one on both targets, where client libraries and operators tread: a paged list at a resourceVersion (what
// client-go's reflector relists with), a PUT that creates and one that must name a resourceVersion, a custom
// resource's unknown fields (warned of, refused under Strict, a patch's too), a body's apiVersion and kind, a create's
// name and generateName, what a server-side apply leaves when it drops a nested object's last field, a label sent as null,
// the answer to a JSON patch that does not apply.
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./sandbox-fidelity-6.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createNamespace, EXAMPLES, rawRequest, warningsOf } from "./harness/kube.ts";
import { ROOT } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const examples = (ns: string) => `/apis/kobun.dev/v1/namespaces/${ns}/kobunexamples`;
const cm = (name: string, meta: object = {}) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, ...meta } });
const MERGE = "application/merge-patch+json";
const APPLY = "application/apply-patch+yaml";

describe.each(selectedTargets())("sandbox fidelity (6) on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "handlers/kobunexample.crd.yaml")], cleanup: [EXAMPLES] });
  /** a request, its JSON answer and its warnings */
  const api = async (t: Target, method: string, path: string, body?: unknown, type?: string) => {
    const response = await rawRequest(t.client, method, path, body, type);
    return { status: response.status, body: (await response.json()) as any, warnings: warningsOf(response) };
  };
  const names = (r: any) => r.body.items?.map((o: any) => o.metadata.name) ?? [r.status, r.body.message];

  test("a paged list at a resourceVersion without a match is Exact; a continue token takes no resourceVersion",
    async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    for (const n of ["a", "b", "c"]) expect((await api(t, "POST", cms(ns), cm(n))).status).toBe(201);
    const then = (await api(t, "GET", cms(ns))).body.metadata.resourceVersion;
    expect((await api(t, "POST", cms(ns), cm("d"))).status).toBe(201);
    expect((await api(t, "DELETE", `${cms(ns)}/a`)).status).toBe(200);
    // what client-go's reflector relists with (its pager's limit, its last resourceVersion): the list as it was
    const paged = await api(t, "GET", `${cms(ns)}?resourceVersion=${then}&limit=2`);
    expect([names(paged), paged.body.metadata.resourceVersion, paged.body.metadata.remainingItemCount])
      .toEqual([["a", "b"], then, 1]);
    const next = await api(t, "GET", `${cms(ns)}?limit=2&continue=${encodeURIComponent(paged.body.metadata.continue)}`);
    expect([names(next), next.body.metadata.continue]).toEqual([["c"], undefined]);
    // not paged, or NotOlderThan: the latest
    expect(names(await api(t, "GET", `${cms(ns)}?resourceVersion=${then}`))).toEqual(["b", "c", "d"]);
    expect(names(await api(t, "GET", `${cms(ns)}?resourceVersion=${then}&limit=0`))).toEqual(["b", "c", "d"]);
    expect(names(await api(t, "GET", `${cms(ns)}?resourceVersion=${then}&resourceVersionMatch=NotOlderThan&limit=2`)))
      .toEqual(["b", "c"]);
    const token = encodeURIComponent((await api(t, "GET", `${cms(ns)}?limit=1`)).body.metadata.continue);
    expect(names(await api(t, "GET", `${cms(ns)}?limit=1&continue=${token}&resourceVersion=${then}`)))
      .toEqual([400, "specifying resource version is not allowed when using continue"]);
    // "0" is let through (the cache hands a token to the storage, which serves the rest whole)
    expect(names(await api(t, "GET", `${cms(ns)}?limit=1&continue=${token}&resourceVersion=0`))).toEqual(["c", "d"]);
  }, 60_000);

  test("a PUT of a missing object creates it where the kind allows (Leases, Events, Services, RBAC), else 404; "
    + "Leases, PDBs and webhook configurations want a resourceVersion to update", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const leases = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
    const made = await api(t, "PUT", `${leases}/l?fieldManager=me`,
      { metadata: { name: "l", resourceVersion: "5" }, spec: { holderIdentity: "x" } });
    expect([made.status, made.body.spec, made.body.metadata.managedFields.map((e: any) => [e.manager, e.operation])])
      .toEqual([201, { holderIdentity: "x" }, [["me", "Update"]]]);
    const created = async (path: string, body: object) => (await api(t, "PUT", path, body)).status;
    const involved = { kind: "ConfigMap", name: "x", namespace: ns };
    expect(await created(`/api/v1/namespaces/${ns}/events/e`, { metadata: { name: "e" }, involvedObject: involved,
      reason: "R" })).toBe(201);
    expect(await created(`/api/v1/namespaces/${ns}/services/s`, { metadata: { name: "s" },
      spec: { ports: [{ port: 80 }] } })).toBe(201);
    expect(await created(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles/r`, { metadata: { name: "r" },
      rules: [] })).toBe(201);
    expect(await created(`${cms(ns)}/c`, cm("c"))).toBe(404);
    expect(await created(`/api/v1/namespaces/${ns}/secrets/s`, { metadata: { name: "s" } })).toBe(404);
    // a dry run creates nothing; the name is the URL's
    expect(await created(`${leases}/dry?dryRun=All`, { metadata: { name: "dry" }, spec: {} })).toBe(201);
    expect((await api(t, "GET", `${leases}/dry`)).status).toBe(404);
    expect(names(await api(t, "PUT", `${leases}/m`, { metadata: { name: "n" }, spec: {} })))
      .toEqual([400, "the name of the object (n) does not match the name on the URL (m)"]);
    // an update of one without a resourceVersion: the generic store's 422 (a ConfigMap takes it)
    const unconditional = await api(t, "PUT", `${leases}/l`, { metadata: { name: "l" }, spec: { holderIdentity: "y" } });
    const detail = "Invalid value: 0: must be specified for an update";
    expect([unconditional.status, unconditional.body.message, unconditional.body.details]).toEqual([422,
      `leases.coordination.k8s.io "l" is invalid: metadata.resourceVersion: ${detail}`, { name: "l",
        group: "coordination.k8s.io", kind: "leases",
        causes: [{ reason: "FieldValueInvalid", message: detail, field: "metadata.resourceVersion" }] }]);
    const budgets = `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`;
    const pdb = { metadata: { name: "p" }, spec: { minAvailable: 1, selector: { matchLabels: { a: "b" } } } };
    expect((await api(t, "POST", budgets, pdb)).status).toBe(201);
    expect((await api(t, "PUT", `${budgets}/p`, pdb)).status).toBe(422);
    expect((await api(t, "PUT", `${cms(ns)}/c`, cm("c"))).status).toBe(404);
  }, 60_000);

  test("a custom resource's unknown fields are warned of, its metadata's first, the rest sorted; Strict refuses them "
    + "so, a patch's as the patched object's 422", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const body = (name: string) => ({ apiVersion: "kobun.dev/v1", kind: "KobunExample", zzz: 1,
      metadata: { name, nope: 1 }, spec: { kept: 1 }, aaa: { b: 1 } });
    const unknown = ["metadata.nope", "aaa", "zzz"].map((f) => `unknown field "${f}"`);
    const warned = await api(t, "POST", examples(ns), body("w"));
    expect([warned.status, warned.warnings, warned.body.zzz, warned.body.metadata.nope, warned.body.spec])
      .toEqual([201, unknown, undefined, undefined, { kept: 1 }]);
    expect((await api(t, "POST", `${examples(ns)}?fieldValidation=Ignore`, body("i"))).warnings).toEqual([]);
    const strict = await api(t, "POST", `${examples(ns)}?fieldValidation=Strict`, body("s"));
    expect([strict.status, strict.body.message]).toEqual([400, "KobunExample in version \"v1\" cannot be handled as "
      + `a KobunExample: strict decoding error: ${unknown.join(", ")}`]);
    // a patch: its result fails to decode, the value Go's JSON of the patched map (every level's keys sorted)
    const patch = { spec: { y: 1 }, bbb: 1 };
    const refused = await api(t, "PATCH", `${examples(ns)}/w?fieldValidation=Strict`, patch, MERGE);
    const { metadata, ...rest } = (await api(t, "GET", `${examples(ns)}/w`)).body;
    const sorted = (v: any): any => Array.isArray(v) ? v.map(sorted) : v && typeof v === "object"
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v;
    const value = JSON.stringify(sorted({ ...rest, metadata, spec: { kept: 1, y: 1 }, bbb: 1 }));
    const why = `Invalid value: ${JSON.stringify(value)}: strict decoding error: unknown field "bbb"`;
    expect([refused.status, refused.body.message, refused.body.details]).toEqual([422,
      ` "" is invalid: patch: ${why}`, { causes: [{ reason: "FieldValueInvalid", message: why, field: "patch" }] }]);
    const warnedPatch = await api(t, "PATCH", `${examples(ns)}/w`, { ...patch, metadata: { odd: 1 } }, MERGE);
    expect([warnedPatch.status, warnedPatch.warnings]).toEqual([200,
      ['unknown field "metadata.odd"', 'unknown field "bbb"']]);
    // a built-in kind's: the value its struct's JSON (in Go's field order), a strategic patch's the patch as fmt says
    expect((await api(t, "POST", cms(ns), cm("c"))).status).toBe(201);
    const builtin = await api(t, "PATCH", `${cms(ns)}/c?fieldValidation=Strict`, { data: { x: "1" }, spec: {} },
      MERGE);
    const said = String(builtin.body.message);
    expect([builtin.status, said.startsWith(' "" is invalid: patch: Invalid value: "{'),
      said.slice(said.lastIndexOf('}": ') + 4)]).toEqual([422, true, 'strict decoding error: unknown field "spec"']);
    const strategic = await api(t, "PATCH", `${cms(ns)}/c?fieldValidation=Strict`,
      { data: { x: "1" }, spec: { l: [1, true, 1.5e-7] } }, "application/strategic-merge-patch+json");
    expect([strategic.status, strategic.body.message]).toEqual([422, ' "" is invalid: patch: Invalid value: '
      + '"map[data:map[x:1] spec:map[l:[1 true 1.5e-07]]]": strict decoding error: unknown field "spec"']);
  }, 60_000);

  test("a body's apiVersion and kind are judged first: another version or kind is a 400 in the scheme's words, "
    + "a custom resource's another kind a 422", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const said = async (method: string, path: string, typeMeta: object, rest: object = {}) => {
      const r = await api(t, method, path, { ...typeMeta, metadata: { name: "x" }, ...rest });
      return [r.status, r.body.message];
    };
    const handled = (what: string, why: string) => [400, `${what} cannot be handled as a ConfigMap: ${why}`];
    const scheme = 'in scheme "pkg/runtime/scheme.go:111"';
    expect(await said("POST", cms(ns), { apiVersion: "v2", kind: "ConfigMap" })).toEqual(handled(
      'ConfigMap in version "v2"', `no kind "ConfigMap" is registered for version "v2" ${scheme}`));
    expect(await said("POST", cms(ns), { apiVersion: "apps/v1", kind: "ConfigMap" })).toEqual(handled(
      'ConfigMap in version "v1"', `no kind "ConfigMap" is registered for version "apps/v1" ${scheme}`));
    expect(await said("POST", cms(ns), { apiVersion: "v1", kind: "Secret" })).toEqual(handled(
      'Secret in version "v1"', "converting (v1.Secret) to (core.ConfigMap): unknown conversion"));
    expect(await said("POST", cms(ns), { apiVersion: "v1", kind: "Status" })).toEqual(handled(
      'Status in version "v1"', "converting (v1.Status) to (core.ConfigMap): unknown conversion"));
    const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const mismatch = (data: string, expected: string) =>
      [400, `the API version in the data (${data}) does not match the expected API version (${expected})`];
    expect(await said("POST", deployments, { apiVersion: "extensions/v1beta1", kind: "Deployment" }))
      .toEqual(mismatch("extensions/v1beta1", "apps/v1"));
    expect(await said("POST", `/apis/events.k8s.io/v1/namespaces/${ns}/events`, { apiVersion: "v1", kind: "Event" }))
      .toEqual(mismatch("v1", "events.k8s.io/v1"));
    expect(await said("POST", cms(ns), { apiVersion: 5, kind: "ConfigMap" })).toEqual([400, "the object provided is "
      + "unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal "
      + 'number into Go struct field .apiVersion of type string ({"apiVersion":5,"kind":"Config ...)']);
    // either left out (or empty): the endpoint's
    expect(await said("POST", cms(ns), { apiVersion: "", kind: "" })).toEqual([201, undefined]);
    expect(await said("PUT", `${cms(ns)}/x`, { apiVersion: "v2", kind: "ConfigMap" })).toEqual(handled(
      'ConfigMap in version "v2"', `no kind "ConfigMap" is registered for version "v2" ${scheme}`));
    // a custom resource: its own apiVersion only (an update's before its resourceVersion), its kind a 422
    expect(await said("POST", examples(ns), { kind: "KobunExample" }, { spec: {} }))
      .toEqual(mismatch("", "kobun.dev/v1"));
    expect(await said("POST", examples(ns), { apiVersion: "kobun.dev/v1", kind: "KobunExample" }, { spec: {} }))
      .toEqual([201, undefined]);
    expect(await said("PUT", `${examples(ns)}/x`, { apiVersion: "kobun.dev/v2", kind: "KobunExample" }))
      .toEqual(mismatch("kobun.dev/v2", "kobun.dev/v1"));
    const other = await api(t, "POST", examples(ns),
      { apiVersion: "kobun.dev/v1", kind: "Other", metadata: { name: "o" } });
    const must = 'Invalid value: "Other": must be KobunExample';
    expect([other.status, other.body.message, other.body.details]).toEqual([422,
      `Other.kobun.dev "o" is invalid: kind: ${must}`, { name: "o", group: "kobun.dev", kind: "Other",
        causes: [{ reason: "FieldValueInvalid", message: must, field: "kind" }] }]);
  }, 60_000);

  test("a create's name: generateName's prefix cut to 58 characters, checked as a prefix too; every rule said with "
    + "its example and regex; a missing one FieldValueRequired", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const long = await api(t, "POST", cms(ns), cm(undefined as never, { generateName: "x".repeat(70) }));
    expect([long.status, long.body.metadata.name.length, long.body.metadata.name.slice(0, 58)])
      .toEqual([201, 63, "x".repeat(58)]);
    const subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
      + "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
      + "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    const invalid = (field: string, value: string, why: string) =>
      ({ reason: "FieldValueInvalid", message: `Invalid value: "${value}": ${why}`, field });
    const causes = async (path: string, meta: object, rest: object = {}) => {
      const r = await api(t, "POST", path, { ...rest, metadata: meta });
      return [r.status, r.body.details?.causes, r.body.details?.name];
    };
    const bad = await causes(cms(ns), { generateName: "Bad_" });
    expect([bad[0], bad[1]?.map((c: any) => c.field)]).toEqual([422, ["metadata.generateName", "metadata.name"]]);
    expect(bad[1]?.[0]).toEqual(invalid("metadata.generateName", "Bad_", subdomain));
    expect(bad[1]?.[1]).toEqual(invalid("metadata.name", bad[2], subdomain));
    expect(await causes(cms(ns), { name: "Bad_" })).toEqual([422, [invalid("metadata.name", "Bad_", subdomain)], "Bad_"]);
    const tooLong = "a".repeat(254);
    expect(await causes(cms(ns), { name: tooLong }))
      .toEqual([422, [invalid("metadata.name", tooLong, "must be no more than 253 characters")], tooLong]);
    // a prefix may end in "-"; a Namespace's name is a label
    expect((await api(t, "POST", cms(ns), cm(undefined as never, { generateName: "ok-" }))).status).toBe(201);
    const label = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
      + "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
      + "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    expect(await causes("/api/v1/namespaces", { name: "Bad.x" }))
      .toEqual([422, [invalid("metadata.name", "Bad.x", label)], "Bad.x"]);
    // none at all: the custom resource's kind qualified by its group
    const required = { reason: "FieldValueRequired", message: "Required value: name or generateName is required",
      field: "metadata.name" };
    const none = await api(t, "POST", examples(ns), { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: {} });
    expect([none.status, none.body.message, none.body.details?.causes]).toEqual([422, `KobunExample.kobun.dev "" is `
      + "invalid: metadata.name: Required value: name or generateName is required", [required]]);
    expect((await causes(cms(ns), {}))[1]).toEqual([required]);
  }, 60_000);

  test("a server-side apply that drops every field of a nested object removes the object, not leaving {}; "
    + "one another manager still fills stays", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const apply = async (path: string, body: object, manager = "one") =>
      (await api(t, "PATCH", `${path}?fieldManager=${manager}&force=true`, body, APPLY)).body;
    const example = (spec: object) => ({ apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "x" }, spec });
    await apply(`${examples(ns)}/x`, example({ size: 1, a: { b: "1", c: { d: "2" } }, e: { f: "3" } }));
    expect((await apply(`${examples(ns)}/x`, example({ size: 1, a: { b: "1" } }))).spec).toEqual({ size: 1, a: { b: "1" } });
    await apply(`${examples(ns)}/x`, example({ a: { g: "4" } }), "two");
    expect((await apply(`${examples(ns)}/x`, example({ size: 1 }))).spec).toEqual({ size: 1, a: { g: "4" } });
    // a built-in kind's map, and the labels
    await apply(`${cms(ns)}/c`, cm("c", { labels: { l: "1" } }));
    await apply(`${cms(ns)}/c`, { ...cm("c", { labels: { l: "1" } }), data: { k: "v" } });
    const left = await apply(`${cms(ns)}/c`, cm("c"));
    expect([left.data, left.metadata.labels]).toEqual([undefined, undefined]);
  }, 60_000);

  test("a label or annotation sent as null is stored as \"\" (Go decodes null so), by a create, a PUT and an apply", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const meta = { labels: { a: null, b: "1" }, annotations: { c: null } };
    const created = (await api(t, "POST", cms(ns), cm("n", meta))).body;
    const put = (await api(t, "PUT", `${cms(ns)}/n`, { ...cm("n", meta), metadata: { ...created.metadata, ...meta } })).body;
    const applied = (await api(t, "PATCH", `${cms(ns)}/m?fieldManager=one`, cm("m", meta), APPLY)).body;
    for (const o of [created, put, applied]) {
      expect([o.metadata.labels, o.metadata.annotations]).toEqual([{ a: "", b: "1" }, { c: "" }]);
    }
  }, 60_000);

  test("a JSON patch that does not apply is a 422 without jsonpatch's words, /scale's too; a copy from a missing key "
    + "copies null (json-patch v4)", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const JSONP = "application/json-patch+json";
    await api(t, "POST", cms(ns), { ...cm("j", { finalizers: [] }), data: { a: "1" } });
    const rejected = [422, "Invalid", "the server rejected our request due to an error in our request", {}];
    for (const ops of [[{ op: "remove", path: "/data/zz" }], [{ op: "add", path: "/metadata/finalizers/5", value: "x" }],
      [{ op: "add", path: "data", value: {} }], [{ op: "frob", path: "/data" }], [{ op: "replace", path: "/x/y", value: 1 }],
      [{ op: "test", path: "/data/a", value: "2" }], [{ op: "move", from: "/nope", path: "/data/b" }]]) {
      const r = await api(t, "PATCH", `${cms(ns)}/j`, ops, JSONP);
      expect([r.status, r.body.reason, r.body.message, r.body.details]).toEqual(rejected);
    }
    // a body that is no list of operations is not decoded: a 400 in Go's words
    const object = await api(t, "PATCH", `${cms(ns)}/j`, { op: "add" }, JSONP);
    expect([object.status, object.body.message]).toEqual([400, "error decoding patch: json: cannot unmarshal object into "
      + "Go value of type []handlers.jsonPatchOp"]);
    const copied = await api(t, "PATCH", `${cms(ns)}/j`, [{ op: "copy", from: "/data/zz", path: "/metadata/labels" }], JSONP);
    expect([copied.status, copied.body.metadata.labels, copied.body.data]).toEqual([200, undefined, { a: "1" }]);
    const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const spec = { selector: { matchLabels: { app: "j" } }, template: { metadata: { labels: { app: "j" } },
      spec: { containers: [{ name: "c", image: "busybox" }] } } };
    expect((await api(t, "POST", deployments, { metadata: { name: "j" }, spec })).status).toBe(201);
    const scaled = await api(t, "PATCH", `${deployments}/j/scale`, [{ op: "test", path: "/spec/replicas", value: 9 }], JSONP);
    expect([scaled.status, scaled.body.reason, scaled.body.message, scaled.body.details]).toEqual(rejected);
  }, 60_000);
});
