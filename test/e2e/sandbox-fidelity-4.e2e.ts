// More details where the sandbox once differed from kube-apiserver (after sandbox-fidelity.e2e.ts, -2 and -3),
// held to the real one on both targets: owner references with two controllers, the metadata a /status write
// keeps, the answers to a body, a value of the wrong type, a patch or a continue token the server cannot read,
// YAML bodies, field selectors read by bytes, a DaemonSet's template generation, one store of Events behind
// core/v1 and events.k8s.io/v1.
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./sandbox-fidelity-4.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createNamespace, EXAMPLES, rawRequest, rawWatch } from "./harness/kube.ts";
import { ROOT } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const MERGE = "application/merge-patch+json";
const APPLY = "application/apply-patch+yaml";
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
    const init = { method, headers, body, ...(tls ? { tls } : {}) } as RequestInit;
    const response = await fetch(`${t.client.server}${path}`, init);
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
      expect(await sendRaw(t, "PATCH", `${cms(ns)}/x`, "{bad", type))
        .toEqual([400, "BadRequest", "invalid JSON patch"]);
    }
    expect(await sendRaw(t, "PATCH", `${cms(ns)}/x`, "[1]", MERGE)).toEqual([400, "BadRequest",
      "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"]);
    expect(await sendRaw(t, "PATCH", `${cms(ns)}/x`, "{}", "application/json-patch+json")).toEqual([400, "BadRequest",
      "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"]);
    expect(await sendRaw(t, "DELETE", `${cms(ns)}/x`, "{bad")).toEqual([400, "BadRequest",
      "couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string"]);
  }, 60_000);

  test("a built-in kind's body of the wrong JSON types is refused as Go's decoding words it", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const refused = async (path: string, body: object) => {
      const r = await api(t, "POST", `${path}?dryRun=All`, body);
      return [r.status, r.body.message];
    };
    const cm = (why: string) => [400, `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot `
      + `unmarshal ${why}`];
    expect(await refused(cms(ns), { metadata: { name: "x", labels: { a: 1 } } }))
      .toEqual(cm("number into Go struct field ObjectMeta.metadata.labels of type string"));
    expect(await refused(cms(ns), { metadata: { name: 5 } }))
      .toEqual(cm("number into Go struct field ObjectMeta.metadata.name of type string"));
    expect(await refused(cms(ns), { metadata: { name: "x", ownerReferences: {} } }))
      .toEqual(cm("object into Go struct field ObjectMeta.metadata.ownerReferences of type []v1.OwnerReference"));
    expect(await refused(cms(ns), { metadata: { name: "x" }, data: "s" }))
      .toEqual(cm("string into Go struct field ConfigMap.data of type map[string]string"));
    expect(await refused(cms(ns), { metadata: { name: "x" }, data: { a: true } }))
      .toEqual(cm("bool into Go struct field ConfigMap.data of type string"));
    expect(await refused(cms(ns), { metadata: { name: "x" }, immutable: "yes" }))
      .toEqual(cm("string into Go struct field ConfigMap.immutable of type bool"));
    const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const container = { name: "c", image: "busybox" };
    const deployment = (spec: object) => ({ metadata: { name: "d" }, spec: { selector: { matchLabels: { a: "b" } },
      template: { metadata: { labels: { a: "b" } }, spec: { containers: [container] } }, ...spec } });
    const dep = (why: string) => [400, `Deployment in version "v1" cannot be handled as a Deployment: json: cannot `
      + `unmarshal ${why}`];
    const replicas = "into Go struct field DeploymentSpec.spec.replicas of type int32";
    expect(await refused(deployments, deployment({ replicas: "3" }))).toEqual(dep(`string ${replicas}`));
    expect(await refused(deployments, deployment({ replicas: 1.5 }))).toEqual(dep(`number 1.5 ${replicas}`));
    expect(await refused(deployments, deployment({ replicas: 3e9 }))).toEqual(dep(`number 3000000000 ${replicas}`));
    expect(await refused(deployments, deployment({ template: { spec: { containers: [{ ...container, name: 7 }] } } })))
      .toEqual(dep("number into Go struct field Container.spec.template.spec.containers.name of type string"));
    expect(await refused(deployments, deployment({ template: { spec: { containers: container } } })))
      .toEqual(dep("object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container"));
    expect(await refused(deployments, deployment({ strategy: { rollingUpdate: { maxSurge: true } } }))).toEqual(dep(
      "bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32"));
    expect(await refused(deployments, deployment({ paused: "no", replicas: "x" })))
      .toEqual(dep("string into Go struct field DeploymentSpec.spec.paused of type bool"));
  }, 60_000);

  test("a []byte value must be base64 that Go decodes; one broken over lines is stored whole", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const secrets = `/api/v1/namespaces/${ns}/secrets`;
    const send = async (path: string, body: object) => {
      const r = await api(t, "POST", `${path}?dryRun=All`, body);
      return [r.status, r.body.message ?? r.body.binaryData?.k ?? r.body.data?.k];
    };
    const cases: [string, number | undefined][] = [
      ["!!", 0], ["YQ", 0], ["YQ=", 3], ["YQ==YQ==", 4], ["Y===", 1], ["YW Jj", 2], ["a", 0], ["YWJjZA=", 7],
      ["-_8=", 0], ["YQ=x", 2], ["YQ==", undefined],
    ];
    for (const [value, at] of cases) {
      const why = (kind: string) => at === undefined ? [201, value]
        : [400, `${kind} in version "v1" cannot be handled as a ${kind}: illegal base64 data at input byte ${at}`];
      expect(await send(cms(ns), { metadata: { name: "b" }, binaryData: { k: value } })).toEqual(why("ConfigMap"));
      expect(await send(secrets, { metadata: { name: "b" }, data: { k: value } })).toEqual(why("Secret"));
    }
    expect(await send(cms(ns), { metadata: { name: "b" }, binaryData: { k: "YWJj\nZA==" } }))
      .toEqual([201, "YWJjZA=="]);
    expect(await send(secrets, { metadata: { name: "b" }, data: { k: "YQ==\n" } })).toEqual([201, "YQ=="]);
  }, 60_000);

  test("a patch whose result its built-in kind cannot decode is a 422 on the field \"patch\"", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    expect((await api(t, "POST", cms(ns), { metadata: { name: "p" }, data: { z: "1" } })).status).toBe(201);
    // the value is the patched object as JSON, whose keys the real server writes in an order of its own
    const refused = async (path: string, body: unknown, type: string) => {
      const r = await api(t, "PATCH", path, body, type);
      const message: string = r.body.message;
      const cause = r.body.details?.causes?.[0];
      return [r.status, r.body.reason, message.startsWith(' "" is invalid: patch: Invalid value: "{'),
        message.slice(message.lastIndexOf('}": ') + 4), cause?.field, ` "" is invalid: patch: ${cause?.message}`
          === message];
    };
    const data = "json: cannot unmarshal number into Go struct field ConfigMap.data of type string";
    const invalid = (why: string) => [422, "Invalid", true, why, "patch", true];
    expect(await refused(`${cms(ns)}/p`, { data: { b: 5 } }, MERGE)).toEqual(invalid(data));
    expect(await refused(`${cms(ns)}/p`, [{ op: "add", path: "/data/b", value: 5 }], "application/json-patch+json"))
      .toEqual(invalid(data));
    expect((await api(t, "GET", `${cms(ns)}/p`)).body.data).toEqual({ z: "1" });
    const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const template = { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "c", image: "busybox" }] } };
    const spec = { selector: { matchLabels: { a: "b" } }, template };
    expect((await api(t, "POST", deployments, { metadata: { name: "d" }, spec })).status).toBe(201);
    expect(await refused(`${deployments}/d/status`, { status: { replicas: "1" } }, MERGE)).toEqual(invalid(
      "json: cannot unmarshal string into Go struct field DeploymentStatus.status.replicas of type int32"));
  }, 60_000);

  test("a YAML body is read as YAML 1.1 without timestamps: y and on are true, 010 is 8, 1:20 a string", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const spec = "spec:\n  a: y\n  b: on\n  c: No\n  d: 'y'\n  e: 010\n  f: 0o17\n  g: 0b11\n  h: 0x_1F\n  i: 1_000\n"
      + "  j: 2001-12-14\n  k: 1:20\n  n: x\n";
    const expected = { a: true, b: true, c: false, d: "y", e: 8, f: 15, g: 3, h: 31, i: 1000, j: "2001-12-14",
      k: "1:20", false: "x" };
    const yaml = (name: string) => `apiVersion: kobun.dev/v1\nkind: KobunExample\nmetadata:\n  name: ${name}\n${spec}`;
    const posted = await sendRaw(t, "POST", examples(ns), yaml("posted"), "application/yaml");
    expect(posted[0]).toBe(201);
    const applied = await sendRaw(t, "PATCH", `${examples(ns)}/applied?fieldManager=m`, yaml("applied"),
      "application/apply-patch+yaml");
    expect(applied[0]).toBe(201);
    for (const name of ["posted", "applied"]) {
      expect((await api(t, "GET", `${examples(ns)}/${name}`)).body.spec).toEqual(expected);
    }
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

  test("a field selector is read by bytes: its terms in Go's order, the operator after any characters", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const refused = async (selector: string) =>
      (await api(t, "GET", `${cms(ns)}?fieldSelector=${encodeURIComponent(selector)}`)).body.message;
    const unknown = (field: string) => `"${field}" is not a known field selector: only "metadata.name", `
      + '"metadata.namespace"';
    // U+FF21 before U+1D4B3 by their UTF-8 bytes (after it by UTF-16 units): the first term said is the first
    for (const selector of ["\uFF21=1,\u{1D4B3}=2", "\u{1D4B3}=2,\uFF21=1"]) {
      expect(await refused(selector)).toBe(unknown("\uFF21"));
    }
    // characters outside the BMP before the operator: the term still splits at it
    expect(await refused("a\u{1D4B3}\u{1D4B3}b!=1")).toBe(unknown("a\u{1D4B3}\u{1D4B3}b"));
    expect(await refused("\u{1D4B3}\u{1D4B3}=1")).toBe(unknown("\u{1D4B3}\u{1D4B3}"));
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
    const sent = refs.map(({ controller, uid, name, kind, apiVersion }) =>
      ({ controller, uid, name, kind, apiVersion }));
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
    // server-side apply of /status: the labels a Deployment keeps are no field of the applier's either
    const apply = async (path: string, kind: string, apiVersion: string, name: string) => {
      const r = await api(t, "PATCH", `${path}/status?fieldManager=st`,
        { apiVersion, kind, metadata: { name, labels: { applied: "1" } } }, APPLY);
      const entry = r.body.metadata.managedFields.find((e: any) => e.manager === "st");
      return [r.status, r.body.metadata.labels.applied, entry?.fieldsV1?.["f:metadata"]];
    };
    expect(await apply(`${deployments}/d`, "Deployment", "apps/v1", "d")).toEqual([200, undefined, undefined]);
    expect(await apply(`${pods}/p`, "Pod", "v1", "p")).toEqual([200, "1", { "f:labels": { "f:applied": {} } }]);
    expect((await api(t, "PATCH", `${pods}/p`, { metadata: { finalizers: null } }, MERGE)).status).toBe(200);
  }, 60_000);

  test("a DaemonSet's template generation annotation: the one sent on create, then the server's own", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const daemonsets = `/apis/apps/v1/namespaces/${ns}/daemonsets`;
    const GENERATION = "deprecated.daemonset.template.generation";
    const template = (t2: string) =>
      ({ metadata: { labels: { app: "d", t: t2 } }, spec: { containers: [{ name: "c", image: "busybox" }] } });
    const spec = { selector: { matchLabels: { app: "d" } }, template: template("1") };
    const said = (r: { status: number; body: any }) =>
      [r.status, r.body.metadata.annotations?.[GENERATION], r.body.metadata.generation];
    const sent = { metadata: { name: "d", annotations: { [GENERATION]: "7" } }, spec };
    expect(said(await api(t, "POST", daemonsets, sent))).toEqual([201, "7", 1]);
    expect(said(await api(t, "POST", daemonsets, { metadata: { name: "e" }, spec }))).toEqual([201, "1", 1]);
    const patch = async (body: object) => said(await api(t, "PATCH", `${daemonsets}/d`, body, MERGE));
    expect(await patch({ metadata: { labels: { l: "1" } } })).toEqual([200, "7", 1]);
    expect(await patch({ spec: { template: template("2") } })).toEqual([200, "8", 2]);
    expect(await patch({ spec: { minReadySeconds: 5 } })).toEqual([200, "8", 3]);
    expect(await patch({ metadata: { annotations: { [GENERATION]: null } } })).toEqual([200, "8", 3]);
    expect(await patch({ metadata: { annotations: { [GENERATION]: "42" } } })).toEqual([200, "8", 3]);
    expect(await patch({ spec: { template: template("3") } })).toEqual([200, "9", 4]);
  }, 60_000);

  /** an Event's own fields, its metadata left out */
  const fields = (o: any) => { const { metadata: _m, ...rest } = o; return rest; };
  const coreEvents = (ns: string) => `/api/v1/namespaces/${ns}/events`;
  const newEvents = (ns: string) => `/apis/events.k8s.io/v1/namespaces/${ns}/events`;

  test("one store of Events behind core/v1 and events.k8s.io/v1, each field under its own name there", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const involved = { kind: "ConfigMap", namespace: ns, name: "x", uid: "u1", apiVersion: "v1", fieldPath: "data" };
    const related = { kind: "Pod", name: "p" };
    const core = await api(t, "POST", coreEvents(ns), { metadata: { name: "c1" }, involvedObject: involved,
      reason: "Because", message: "a message", type: "Warning", count: 3, source: { component: "comp", host: "h" },
      firstTimestamp: "2026-01-01T00:00:00Z", lastTimestamp: "2026-01-02T00:00:00Z", reportingComponent: "rc",
      reportingInstance: "ri", action: "Act", related });
    expect(core.status).toBe(201);
    expect(fields((await api(t, "GET", `${newEvents(ns)}/c1`)).body)).toEqual({ kind: "Event",
      apiVersion: "events.k8s.io/v1", eventTime: null, reportingController: "rc", reportingInstance: "ri",
      action: "Act", reason: "Because", regarding: involved, related, note: "a message", type: "Warning",
      deprecatedSource: { component: "comp", host: "h" }, deprecatedFirstTimestamp: "2026-01-01T00:00:00Z",
      deprecatedLastTimestamp: "2026-01-02T00:00:00Z", deprecatedCount: 3 });
    // the fields a Go struct always writes, in each shape
    const bare = await api(t, "POST", coreEvents(ns), { metadata: { name: "c2" }, reason: "R", message: "m",
      involvedObject: { kind: "ConfigMap", namespace: ns, name: "x" } });
    expect(fields(bare.body)).toEqual({ kind: "Event", apiVersion: "v1", reason: "R", message: "m",
      involvedObject: { kind: "ConfigMap", namespace: ns, name: "x" }, source: {}, firstTimestamp: null,
      lastTimestamp: null, eventTime: null, reportingComponent: "", reportingInstance: "" });
    expect(fields((await api(t, "GET", `${newEvents(ns)}/c2`)).body)).toEqual({ kind: "Event",
      apiVersion: "events.k8s.io/v1", reason: "R", note: "m",
      regarding: { kind: "ConfigMap", namespace: ns, name: "x" },
      eventTime: null, deprecatedSource: {}, deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null });
    // one written through events.k8s.io: read, listed and watched through core/v1
    const listed = (await api(t, "GET", coreEvents(ns))).body.metadata.resourceVersion;
    const series = { count: 2, lastObservedTime: "2026-01-04T00:00:00.000000Z" };
    const made = await api(t, "POST", newEvents(ns), { metadata: { name: "n1" },
      eventTime: "2026-01-03T00:00:00.000000Z", reportingController: "example.com/ctl", reportingInstance: "inst",
      action: "Do", reason: "Why", note: "the note", type: "Normal", regarding: { kind: "ConfigMap", name: "x",
        namespace: ns }, related, series });
    expect(made.status).toBe(201);
    const asCore = { kind: "Event", apiVersion: "v1", involvedObject: { kind: "ConfigMap", name: "x", namespace: ns },
      reason: "Why", message: "the note", source: {}, firstTimestamp: null, lastTimestamp: null, type: "Normal",
      eventTime: "2026-01-03T00:00:00.000000Z", series, action: "Do", related, reportingComponent: "example.com/ctl",
      reportingInstance: "inst" };
    expect(fields((await api(t, "GET", `${coreEvents(ns)}/n1`)).body)).toEqual(asCore);
    const watched = await rawWatch(t.client, coreEvents(ns), { resourceVersion: listed },
      { until: (ev) => ev.object?.metadata?.name === "n1", timeoutMs: 15_000 });
    expect(watched.events.filter((ev) => ev.object.metadata.name === "n1").map((ev) => [ev.type, fields(ev.object)]))
      .toEqual([["ADDED", asCore]]);
    const names = async (path: string) => (await api(t, "GET", path)).body.items.map((i: any) => i.metadata.name);
    expect([await names(coreEvents(ns)), await names(newEvents(ns))]).toEqual([["c1", "c2", "n1"], ["c1", "c2", "n1"]]);
    const selected = `${newEvents(ns)}?fieldSelector=reportingController%3Dexample.com%2Fctl`;
    expect(await names(selected)).toEqual(["n1"]);
    // a delete through one is gone from the other
    expect((await api(t, "DELETE", `${newEvents(ns)}/c2`)).status).toBe(200);
    expect((await api(t, "GET", `${coreEvents(ns)}/c2`)).body.message).toBe('events "c2" not found');
  }, 60_000);

  test("events.k8s.io/v1's stricter rules over the one store: its create, its update; worded as the core kind's",
    async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const event = { metadata: { name: "e" }, eventTime: "2026-01-03T00:00:00.000000Z", reportingController: "c",
      reportingInstance: "i", action: "A", reason: "R", type: "Normal", note: "n",
      regarding: { kind: "Pod", name: "p", namespace: ns } };
    const invalid = (name: string, ...causes: [string, string][]) => {
      const said = causes.map(([field, message]) => `${field}: ${message}`);
      return [422, `Event "${name}" is invalid: ${said.length === 1 ? said[0] : `[${said.join(", ")}]`}`];
    };
    const said = (r: { status: number; body: any }) => [r.status, r.body.message];
    const unsetOnes = { deprecatedCount: 2, deprecatedSource: { component: "x" },
      deprecatedFirstTimestamp: "2026-01-01T00:00:00Z", deprecatedLastTimestamp: "2026-01-01T00:00:00Z" };
    const needsUnset = 'Invalid value: "": needs to be unset';
    expect(said(await api(t, "POST", newEvents(ns), { ...event, ...unsetOnes }))).toEqual(invalid("e",
      ["firstTimestamp", needsUnset], ["lastTimestamp", needsUnset], ["count", needsUnset], ["source", needsUnset]));
    expect(said(await api(t, "POST", newEvents(ns), { ...event, type: "Odd", series: { count: 1 } }))).toEqual(invalid(
      "e", ["series.count", 'Invalid value: "": should be at least 2'], ["series.lastObservedTime", "Required value"],
      ["type", 'Invalid value: "": has invalid value: Odd']));
    expect((await api(t, "POST", newEvents(ns), event)).status).toBe(201);
    const patch = (path: string, body: object) => api(t, "PATCH", path, body, MERGE);
    const moved = { kind: "Pod", name: "q", namespace: ns };
    const immutable = await patch(`${newEvents(ns)}/e`, { note: "other", reason: "Other", regarding: moved });
    expect(said(immutable)).toEqual(invalid(
      "e", ["involvedObject", `Invalid value: {"Kind":"Pod","Namespace":"${ns}","Name":"q","UID":"","APIVersion":"",`
        + '"ResourceVersion":"","FieldPath":""}: field is immutable'], ["reason", 'Invalid value: "Other": field is '
        + "immutable"], ["message", 'Invalid value: "other": field is immutable']));
    const series = { count: 3, lastObservedTime: "2026-01-04T00:00:00.000000Z" };
    expect((await patch(`${newEvents(ns)}/e`, { series })).body.series).toEqual(series);
    // through core/v1 the same Event may change
    expect((await patch(`${coreEvents(ns)}/e`, { message: "changed" })).body.message).toBe("changed");
    // a core Event with an eventTime needs its reporting fields, the controller a qualified name
    const qualified = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
      + "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
      + "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    expect(said(await api(t, "POST", coreEvents(ns), { metadata: { name: "c" }, eventTime: event.eventTime,
      involvedObject: { namespace: ns } }))).toEqual(invalid("c", ["reportingComponent", "Required value"],
      ["reportingComponent", 'Invalid value: "": name part must be non-empty'],
      ["reportingComponent", `Invalid value: "": ${qualified}`], ["reportingInstance", "Required value"],
      ["action", "Required value"], ["reason", "Required value"]));
  }, 60_000);

  test("a built-in kind's field it does not have is dropped, with a warning (none under Ignore; Strict refuses)", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const made = async (name: string, query = "") => {
      const body = { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { a: "1" }, status: { seen: true },
        spec: { odd: 1 } };
      const response = await rawRequest(t.client, "POST", `${cms(ns)}${query}`, body);
      const answer = (await response.json()) as any;
      return { status: response.status, warning: response.headers.get("warning"), answer };
    };
    const warned = await made("warned");
    expect([warned.status, warned.answer.status, warned.answer.spec, warned.answer.data]).toEqual([201, undefined, undefined, { a: "1" }]);
    expect(warned.warning).toBe('299 - "unknown field \\"status\\"", 299 - "unknown field \\"spec\\""'); // body order
    const stored = await api(t, "GET", `${cms(ns)}/warned`);
    expect([stored.body.status, stored.body.spec]).toEqual([undefined, undefined]);
    const ignored = await made("ignored", "?fieldValidation=Ignore");
    expect([ignored.status, ignored.warning, ignored.answer.status]).toEqual([201, null, undefined]);
    const patched = await rawRequest(t.client, "PATCH", `${cms(ns)}/warned`, { status: { late: 1 } }, MERGE);
    expect([patched.status, patched.headers.get("warning")]).toEqual([200, '299 - "unknown field \\"status\\""']);
    expect(((await patched.json()) as any).status).toBeUndefined();
    expect((await made("strict", "?fieldValidation=Strict")).status).toBe(400);
  }, 60_000);
});
