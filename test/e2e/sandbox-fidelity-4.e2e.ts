// More details where the sandbox once differed from kube-apiserver (after sandbox-fidelity.e2e.ts, -2 and -3),
// held to the real one on both targets: owner references with two controllers, the metadata a /status write
// keeps, the answers to a body or a continue token the server cannot read, one store of Events behind
// core/v1 and events.k8s.io/v1.
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./sandbox-fidelity-4.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createNamespace, EXAMPLES, rawRequest } from "./harness/kube.ts";
import { ROOT } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const MERGE = "application/merge-patch+json";
const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const examples = (ns: string) => `/apis/kobun.dev/v1/namespaces/${ns}/kobunexamples`;
const owner = (name: string, uid: string, controller?: boolean) =>
  ({ apiVersion: "v1", kind: "ConfigMap", name, uid, ...(controller === undefined ? {} : { controller }) });

describe.each(selectedTargets())("sandbox fidelity (4) on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "handlers/kobunexample.crd.yaml")], cleanup: [EXAMPLES] });
  /** a request and its JSON answer */
  const api = async (t: Target, method: string, path: string, body?: unknown, type?: string) => {
    const response = await rawRequest(t.client, method, path, body, type);
    return { status: response.status, body: (await response.json()) as any };
  };

  /** a request with a body sent as it is (not JSON-encoded): its status and message */
  const sendRaw = async (t: Target, method: string, path: string, body: string, type = "application/json") => {
    const headers = { ...(await t.client.connection.authHeaders()), "content-type": type };
    const tls = t.client.connection.tls;
    const response = await fetch(`${t.client.server}${path}`, { method, headers, body, ...(tls ? { tls } : {}) } as RequestInit);
    const answer = (await response.json()) as any;
    return [response.status, answer.reason, answer.message];
  };

  test("a body that is not JSON, or not an object, is refused in Go's words; a YAML body is read", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    expect((await api(t, "POST", cms(ns), { metadata: { name: "x" } })).status).toBe(201);
    const unrecognized = (why: string, what: string) => [400, "BadRequest",
      `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: `
      + `${why} (${what})`];
    const cases: [string, string][] = [
      ["{not json", "invalid character 'n' looking for beginning of object key string"],
      ['{"a":1,', "unexpected end of JSON input"],
      ['{"a" 1}', "invalid character '1' after object key"],
      ['{"a":1} x', "invalid character 'x' after top-level value"],
      ['{"a":tru}', "invalid character '}' in literal true (expecting 'e')"],
      ['{"a":"\\q"}', "invalid character 'q' in string escape code"],
      ['{"a":1.}', "invalid character '}' after decimal point in numeric literal"],
      ['{"a":[1 2]}', "invalid character '2' after array element"],
    ];
    for (const [body, why] of cases) expect(await sendRaw(t, "POST", cms(ns), body)).toEqual(unrecognized(why, body));
    const long = '{"metadata":{"name":"a-name-longer-than-thirty-bytes"},}';
    expect(await sendRaw(t, "PUT", `${cms(ns)}/x`, long)).toEqual(unrecognized(
      "invalid character '}' looking for beginning of object key string", `${long.slice(0, 30)} ...`));
    const typeMeta = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
      + '"json:\\"kind,omitempty\\"" }';
    expect(await sendRaw(t, "POST", cms(ns), "[1,2]"))
      .toEqual(unrecognized(`json: cannot unmarshal array into Go value of type ${typeMeta}`, "5b312c325d"));
    expect(await sendRaw(t, "POST", cms(ns), ""))
      .toEqual(unrecognized("unexpected end of JSON input", "<empty>"));
    expect(await sendRaw(t, "POST", cms(ns), "- 1\n", "application/yaml"))
      .toEqual(unrecognized(`json: cannot unmarshal array into Go value of type ${typeMeta}`, "2d20310a"));
    // (a YAML 1.1 reader, the server's: a bare `y` would be true)
    const yaml = await sendRaw(t, "POST", cms(ns), "metadata:\n  name: from-yaml\ndata:\n  a: b\n", "application/yaml");
    expect(yaml[0]).toBe(201);
    // patches and DELETE's options
    for (const type of [MERGE, "application/json-patch+json", "application/strategic-merge-patch+json"]) {
      expect(await sendRaw(t, "PATCH", `${cms(ns)}/x`, "{bad", type)).toEqual([400, "BadRequest", "invalid JSON patch"]);
    }
    expect(await sendRaw(t, "PATCH", `${cms(ns)}/x`, "[1]", MERGE)).toEqual([400, "BadRequest",
      "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"]);
    expect(await sendRaw(t, "PATCH", `${cms(ns)}/x`, "{}", "application/json-patch+json")).toEqual([400, "BadRequest",
      "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"]);
    expect(await sendRaw(t, "DELETE", `${cms(ns)}/x`, "{bad")).toEqual([400, "BadRequest",
      "couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string"]);
  }, 60_000);

  test("a continue token the server cannot read is a 400 saying why", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    for (const name of ["a", "b"]) expect((await api(t, "POST", cms(ns), { metadata: { name } })).status).toBe(201);
    const first = await api(t, "GET", `${cms(ns)}?limit=1`);
    const next = await api(t, "GET", `${cms(ns)}?limit=1&continue=${first.body.metadata.continue}`);
    expect(next.body.items.map((i: any) => i.metadata.name)).toEqual(["b"]);
    const token = (o: unknown) => Buffer.from(typeof o === "string" ? o : JSON.stringify(o)).toString("base64url");
    const v = "meta.k8s.io/v1";
    const cases: [string, string][] = [
      ["garbage", "invalid character '\\u0081' looking for beginning of value"],
      ["a", "illegal base64 data at input byte 0"],
      ["ab=", "illegal base64 data at input byte 2"],
      ["a+b", "illegal base64 data at input byte 1"],
      [token("{"), "unexpected end of JSON input"],
      [token("[]"), "json: cannot unmarshal array into Go value of type storage.continueToken"],
      [token({ v, rv: "5", start: "a" }),
        "json: cannot unmarshal string into Go struct field continueToken.rv of type int64"],
      [token({}), "server does not recognize this encoded version "],
      [token({ v: "x", rv: 5, start: "a" }), "server does not recognize this encoded version x"],
      [token({ v, rv: 0, start: "a" }), `incorrect encoded start resourceVersion (version ${v})`],
      [token({ v, rv: 5, start: "" }), `encoded start key empty (version ${v})`],
      [token({ v, rv: 5, start: "../a" }), "../a"],
      [token({ v, rv: 5, start: "a/../b" }), "a/../b"],
    ];
    for (const [cont, why] of cases) {
      const r = await api(t, "GET", `${cms(ns)}?limit=1&continue=${encodeURIComponent(cont)}`);
      expect([cont, r.status, r.body.reason, r.body.message])
        .toEqual([cont, 400, "BadRequest", `invalid continue token: continue key is not valid: ${why}`]);
    }
  }, 60_000);

  test("owner references: only one may be the controller; each further one is a cause naming the first", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    // owners that exist, so that no garbage collector takes the objects away meanwhile
    const uids: string[] = [];
    for (const name of ["a", "b", "c", "d"]) {
      uids.push((await api(t, "POST", cms(ns), { metadata: { name } })).body.metadata.uid);
    }
    const refs = ["a", "b", "c", "d"].map((name, i) => owner(name, uids[i]!, i !== 1));
    // the value is the list as the server writes it: its fields in their order, whatever order they came in
    const sent = refs.map(({ controller, uid, name, kind, apiVersion }) => ({ controller, uid, name, kind, apiVersion }));
    const r = await api(t, "POST", cms(ns), { metadata: { name: "two", ownerReferences: sent } });
    const only = (other: string) => `Invalid value: ${JSON.stringify(refs)}: Only one reference can have Controller `
      + `set to true. Found "true" in references for ConfigMap/a and ConfigMap/${other}`;
    expect([r.status, r.body.reason, r.body.message]).toEqual([422, "Invalid", 'ConfigMap "two" is invalid: '
      + `[metadata.ownerReferences: ${only("c")}, metadata.ownerReferences: ${only("d")}]`]);
    expect(r.body.details.causes).toEqual(["c", "d"].map((other) =>
      ({ reason: "FieldValueInvalid", message: only(other), field: "metadata.ownerReferences" })));
    const one = await api(t, "POST", cms(ns), { metadata: { name: "one", ownerReferences: refs.slice(0, 2) } });
    expect(one.status).toBe(201);
    const update = await api(t, "PATCH", `${cms(ns)}/one`, { metadata: { ownerReferences: refs.slice(0, 3) } }, MERGE);
    expect([update.status, update.body.details?.causes?.length]).toEqual([422, 1]);
  }, 60_000);

  test("a /status write takes the sent metadata on built-in kinds (not a Deployment's labels), none on a custom "
    + "resource", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const meta = { labels: { app: "d" }, annotations: { kept: "1", gone: "1" } };
    const template = { metadata: { labels: { app: "d" } }, spec: { containers: [{ name: "c", image: "busybox" }] } };
    const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const spec = { replicas: 1, selector: { matchLabels: { app: "d" } }, template };
    expect((await api(t, "POST", deployments, { metadata: { name: "d", ...meta }, spec })).status).toBe(201);
    const pods = `/api/v1/namespaces/${ns}/pods`;
    expect((await api(t, "POST", pods, { metadata: { name: "p", ...meta }, spec: template.spec })).status).toBe(201);
    expect((await api(t, "POST", examples(ns), { apiVersion: "kobun.dev/v1", kind: "KobunExample",
      metadata: { name: "w", ...meta }, spec: {} })).status).toBe(201);
    const { uid } = (await api(t, "POST", cms(ns), { metadata: { name: "o" } })).body.metadata;
    const change = {
      labels: { app: "d", added: "1" }, annotations: { gone: null, new: "2" }, finalizers: ["e2e.kobun.dev/hold"],
      ownerReferences: [owner("o", uid)],
    };
    const written = async (path: string) => {
      const r = await api(t, "PATCH", `${path}/status`, { metadata: change, status: {} }, MERGE);
      const m = r.body.metadata;
      return [r.status, m.labels, m.annotations, m.finalizers, m.ownerReferences?.length, m.generation];
    };
    const annotations = { kept: "1", new: "2" };
    const finalizers = change.finalizers;
    expect(await written(`${deployments}/d`)).toEqual([200, meta.labels, annotations, finalizers, 1, 1]);
    expect(await written(`${pods}/p`)).toEqual([200, change.labels, annotations, finalizers, undefined, 1]);
    expect(await written(`${examples(ns)}/w`)).toEqual([200, meta.labels, meta.annotations, undefined, undefined, 1]);
    // a PUT of /status: what it leaves out is gone
    const current = (await api(t, "GET", `${deployments}/d`)).body;
    const put = await api(t, "PUT", `${deployments}/d/status`,
      { ...current, metadata: { ...current.metadata, annotations: { only: "1" }, finalizers: undefined } });
    expect([put.status, put.body.metadata.annotations, put.body.metadata.finalizers]).toEqual([200, { only: "1" },
      undefined]);
    expect((await api(t, "PATCH", `${pods}/p`, { metadata: { finalizers: null } }, MERGE)).status).toBe(200);
  }, 60_000);
});
