// More details where the sandbox once differed from kube-apiserver (sandbox-fidelity.e2e.ts has the first ones,
// sandbox-fidelity-3.e2e.ts the writes), held to the real one on both targets: label and field selectors' syntax,
// the Event field selectors of events.k8s.io/v1 and core/v1, ObjectMeta validation, ListOptions, and a watch's
// initial events and their end.
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./sandbox-fidelity-2.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createNamespace, EXAMPLES, rawRequest, rawWatch, warningsOf } from "./harness/kube.ts";
import { ROOT } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const MERGE = "application/merge-patch+json";
const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const examples = (ns: string) => `/apis/kobun.dev/v1/namespaces/${ns}/kobunexamples`;
const cm = (name: string, meta: object = {}) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, ...meta } });
const example = (name: string, rest: object = {}) =>
  ({ apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name }, ...rest });
const RULE = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
  + "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
  + "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_RULE = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
  + "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
  + "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const options = (kind: string, causes: [string, string, string][]) => ({ group: "meta.k8s.io", kind,
  causes: causes.map(([reason, field, message]) => ({ reason, message, field })) });

describe.each(selectedTargets())("sandbox fidelity (2) on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "handlers/kobunexample.crd.yaml")], cleanup: [EXAMPLES] });
  /** a request, its JSON answer and its warnings */
  const api = async (t: Target, method: string, path: string, body?: unknown, type?: string) => {
    const response = await rawRequest(t.client, method, path, body, type);
    return { status: response.status, body: (await response.json()) as any, warnings: warningsOf(response) };
  };
  const names = (r: any) => r.body.items?.map((o: any) => o.metadata.name) ?? [r.status, r.body.message];
  const q = (s: string) => encodeURIComponent(s);

  test("label selectors as labels.Parse reads them: refusals word for word, > and < on integers", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const labelled = { a: { n: "5", in: "in" }, b: { n: "10", e: "" }, c: { n: "x" }, d: {} };
    for (const [n, labels] of Object.entries(labelled)) {
      expect((await api(t, "POST", cms(ns), cm(n, { labels }))).status).toBe(201);
    }
    const select = async (s: string) => names(await api(t, "GET", `${cms(ns)}?labelSelector=${q(s)}`));
    const matched: Record<string, string[]> = { "n>1": ["a", "b"], "n<6": ["a"], "in in (in)": ["a"],
      "e in (,)": ["b"], "n notin (5),n": ["b", "c"], "n in (5,,x)": ["a", "c"], "!n": ["d"] };
    for (const [s, want] of Object.entries(matched)) expect([s, await select(s)]).toEqual([s, want]);
    const refused: Record<string, string> = {
      "a=b=c": "found '=', expected: ',' or 'end of string'",
      "a in b": "unable to parse requirement: found 'b' expected: '('",
      "a in (b": "unable to parse requirement: found '', expected: ',' or ')'",
      "a,,b": "found ',', expected: identifier after ','",
      ",a": "found ',', expected: !, identifier, or 'end of string'",
      "a>b": "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must "
        + "be an integer",
      "-a=b": `unable to parse requirement: <nil>: Invalid value: "-a": name part ${RULE}`,
      "a=-b": `unable to parse requirement: values[0][a]: Invalid value: "-b": ${VALUE_RULE}`,
    };
    for (const [s, message] of Object.entries(refused)) expect([s, await select(s)]).toEqual([s, [400, message]]);
  }, 60_000);

  test("a field selector: terms sorted, split at their operator, nothing trimmed, values escaped", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    for (const n of ["a", "b", "c"]) expect((await api(t, "POST", cms(ns), cm(n))).status).toBe(201);
    const select = async (s: string) => names(await api(t, "GET", `${cms(ns)}?fieldSelector=${q(s)}`));
    expect(await select("metadata.name!=a,metadata.name!=b")).toEqual(["c"]);
    expect(await select("metadata.name==b")).toEqual(["b"]);
    expect(await select("metadata.name=a=b"))
      .toEqual([400, "invalid field selector: unescaped character in value: 61"]);
    expect(await select("metadata.name=a\\x")).toEqual([400, "invalid field selector: invalid escape sequence: \\x"]);
    expect(await select(" metadata.name = a")).toEqual([400,
      `" metadata.name " is not a known field selector: only "metadata.name", "metadata.namespace"`]);
    expect(await select("x=1,metadata.name"))
      .toEqual([400, "invalid selector: 'x=1,metadata.name'; can't understand 'metadata.name'"]);
  }, 60_000);

  test("Event field selectors: events.k8s.io's regarding.*, reason, reportingController, type", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const eventTime = "2026-01-01T00:00:00.000000Z";
    const newEvent = (name: string, kind: string, reason: string, type: string, controller: string) => ({
      apiVersion: "events.k8s.io/v1", kind: "Event", metadata: { name }, eventTime, reason, type, action: "Act",
      regarding: { apiVersion: "v1", kind, name: `${kind.toLowerCase()}-1`, namespace: ns },
      reportingController: controller, reportingInstance: "i-1", note: "a note",
    });
    const events = `/apis/events.k8s.io/v1/namespaces/${ns}/events`;
    expect((await api(t, "POST", events, newEvent("e1", "ConfigMap", "Made", "Normal", "ctl/a"))).status).toBe(201);
    expect((await api(t, "POST", events, newEvent("e2", "Secret", "Broke", "Warning", "ctl/b"))).status).toBe(201);
    const select = async (path: string, s: string) => names(await api(t, "GET", `${path}?fieldSelector=${q(s)}`));
    const chosen: Record<string, string[]> = { "regarding.kind=Secret": ["e2"], "regarding.name=configmap-1": ["e1"],
      "reason=Made": ["e1"], "reportingController=ctl/b": ["e2"], "type!=Warning": ["e1"],
      [`regarding.namespace=${ns}`]: ["e1", "e2"] };
    for (const [s, want] of Object.entries(chosen)) expect([s, await select(events, s)]).toEqual([s, want]);
    for (const field of ["note", "involvedObject.name", "source"]) {
      expect(await select(events, `${field}=x`)).toEqual([400, `field label not supported: ${field}`]);
    }
    // core/v1 (another namespace: the two APIs serve one store on the real server): source, else the reporter
    const core = await createNamespace(t.client, "e2e-fidelity");
    const coreEvents = `/api/v1/namespaces/${core}/events`;
    const coreEvent = (name: string, more: object) =>
      ({ metadata: { name }, involvedObject: { kind: "ConfigMap", name: "x", namespace: core }, reason: "R", ...more });
    expect((await api(t, "POST", coreEvents, coreEvent("c1", { source: { component: "comp" } }))).status).toBe(201);
    expect((await api(t, "POST", coreEvents, coreEvent("c2", { reportingComponent: "ctl/c" }))).status).toBe(201);
    expect([await select(coreEvents, "source=comp"), await select(coreEvents, "source=ctl/c")])
      .toEqual([["c1"], ["c2"]]);
    expect(await select(coreEvents, "reportingComponent=ctl/c")).toEqual(["c2"]);
    expect(await select(coreEvents, "regarding.name=x")).toEqual([400, "field label not supported: regarding.name"]);
  }, 60_000);

  test("ObjectMeta is validated: labels, annotation keys, owner references, finalizers, in one 422", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const refused = async (name: string, meta: object, more: object = {}) => {
      const r = await api(t, "POST", cms(ns), { ...cm(name, meta), ...more });
      return [r.status, r.body.message, r.body.details?.causes];
    };
    const invalid = (field: string, value: string, why: string) =>
      ({ reason: "FieldValueInvalid", message: `Invalid value: ${value}: ${why}`, field });
    const cause = invalid("metadata.labels", '"-3"', VALUE_RULE);
    expect(await refused("l", { labels: { n: "-3" } }))
      .toEqual([422, `ConfigMap "l" is invalid: metadata.labels: ${cause.message}`, [cause]]);
    const key = invalid("metadata.annotations", '"-a"', `name part ${RULE}`);
    expect(await refused("a", { annotations: { "-a": "x" } }))
      .toEqual([422, `ConfigMap "a" is invalid: metadata.annotations: ${key.message}`, [key]]);
    expect((await api(t, "POST", cms(ns), cm("upper", { annotations: { "Example.COM/Foo": "x" } }))).status).toBe(201);
    const owner = { reason: "FieldValueRequired", message: "Required value: must not be empty",
      field: "metadata.ownerReferences[0].uid" };
    expect((await refused("o", { ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "x" }] }))[2])
      .toEqual([owner]);
    expect((await refused("f", { finalizers: ["noslash"] }))[2]).toEqual([invalid("metadata.finalizers[0]",
      '"noslash"', "name is neither a standard finalizer name nor is it fully qualified")]);
    const both = "finalizer orphan and foregroundDeletion cannot be both set";
    expect((await refused("g", { finalizers: ["orphan", "foregroundDeletion"] }))[2])
      .toEqual([invalid("metadata.finalizers", '["orphan","foregroundDeletion"]', both)]);
    const two = await refused("d", { labels: { n: "-3" } }, { data: { "bad key!": "x" } });
    expect([two[1], two[2]]).toEqual([`ConfigMap "d" is invalid: [metadata.labels: ${cause.message}, data[bad key!]: `
      + `Invalid value: "bad key!": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. `
      + `'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')]`,
    [cause, invalid("data[bad key!]", '"bad key!"', "a valid config key must consist of alphanumeric characters, '-', "
      + "'_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
      + "'[-._a-zA-Z0-9]+')")]]);
    // a custom resource: an unqualified finalizer only warns; an update's metadata causes come thrice, said once
    const w = await api(t, "POST", examples(ns), { ...example("w", { spec: {} }),
      metadata: { name: "w", finalizers: ["noslash"] } });
    expect([w.status, w.warnings]).toEqual([201, ['metadata.finalizers: "noslash": prefer a domain-qualified '
      + "finalizer name to avoid accidental conflicts with other finalizer writers"]]);
    const labels = { metadata: { labels: { n: "-3" }, finalizers: null } };
    const update = await api(t, "PATCH", `${examples(ns)}/w`, labels, MERGE);
    expect([update.status, update.body.message, update.body.details.causes]).toEqual([422,
      `KobunExample.kobun.dev "w" is invalid: metadata.labels: ${cause.message}`, [cause, cause, cause]]);
    expect((await api(t, "PATCH", `${examples(ns)}/w`, { metadata: { finalizers: null } }, MERGE)).status).toBe(200);
  }, 60_000);

  test("ListOptions as there: 422s, ParseInt, resourceVersion 0 served whole, one not reached a 504", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    for (const n of ["a", "b", "c"]) expect((await api(t, "POST", cms(ns), cm(n))).status).toBe(201);
    const list = (query: string) => api(t, "GET", `${cms(ns)}?${query}`);
    const forbidden = (why: string): [string, string, string] =>
      ["FieldValueForbidden", "resourceVersionMatch", `Forbidden: ${why}`];
    const refused = async (query: string, causes: [string, string, string][]) => {
      const r = await list(query);
      const lines = causes.map(([, field, message]) => `${field}: ${message}`);
      expect([query, r.status, r.body.message, r.body.details]).toEqual([query, 422, 'ListOptions.meta.k8s.io "" is '
        + `invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(", ")}]`}`, options("ListOptions", causes)]);
    };
    await refused("resourceVersionMatch=NotOlderThan",
      [forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided")]);
    await refused("resourceVersion=0&resourceVersionMatch=Exact",
      [forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"')]);
    await refused("resourceVersion=1&resourceVersionMatch=Bogus", [["FieldValueNotSupported", "resourceVersionMatch",
      'Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""']]);
    await refused("sendInitialEvents=false",
      [["FieldValueForbidden", "sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list"]]);
    const bad = async (query: string) => { const r = await list(query); return [r.status, r.body.message]; };
    expect(await bad("limit=abc")).toEqual([400, 'strconv.ParseInt: parsing "abc": invalid syntax']);
    expect(await bad("timeoutSeconds=1.5")).toEqual([400, 'strconv.ParseInt: parsing "1.5": invalid syntax']);
    expect(await bad("resourceVersion=abc")).toEqual([400, 'invalid resource version: resourceVersion: Invalid value: '
      + '"abc": strconv.ParseUint: parsing "abc": invalid syntax']);
    const whole = await list("resourceVersion=0&limit=1");
    expect([names(whole), whole.body.metadata.continue]).toEqual([["a", "b", "c"], undefined]);
    expect(names(await list("limit=-1"))).toEqual(["a", "b", "c"]);
    const rv = Number(whole.body.metadata.resourceVersion);
    expect(names(await list(`resourceVersion=${rv}&resourceVersionMatch=Exact`))).toEqual(["a", "b", "c"]);
    const get = await api(t, "GET", `${cms(ns)}/a?resourceVersion=abc`);
    expect([get.status, get.body.reason, get.body.message]).toEqual([500, undefined,
      'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax']);
    // the real server waits for it 3 s first
    const ahead = await list(`resourceVersion=${rv + 100_000}`);
    expect([ahead.status, ahead.body.reason, ahead.body.details]).toEqual([504, "Timeout",
      { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
        retryAfterSeconds: 1 }]);
    expect(ahead.body.message)
      .toMatch(new RegExp(`^Timeout: Too large resource version: ${rv + 100_000}, current: \\d+$`));
  }, 60_000);

  test("a watch from no resourceVersion sends its initial events, then the initial-events-end BOOKMARK", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    for (const n of ["a", "b"]) expect((await api(t, "POST", cms(ns), cm(n))).status).toBe(201);
    const watch = async (query: Record<string, string>) => (await rawWatch(t.client, cms(ns), query,
      { until: (e) => e.type === "BOOKMARK", timeoutMs: 10_000 })).events
      .map((e) => [e.type, e.object.metadata.name ?? e.object.metadata.annotations]);
    const end = ["BOOKMARK", { "k8s.io/initial-events-end": "true" }];
    expect(await watch({ allowWatchBookmarks: "true" })).toEqual([["ADDED", "a"], ["ADDED", "b"], end]);
    expect(await watch({ allowWatchBookmarks: "true", resourceVersion: "0" }))
      .toEqual([["ADDED", "a"], ["ADDED", "b"], end]);
    // without bookmarks: the initial events only; sendInitialEvents=false: nothing from before (both end in 1 s)
    expect(await watch({ sendInitialEvents: "true", resourceVersionMatch: "NotOlderThan", timeoutSeconds: "1" }))
      .toEqual([["ADDED", "a"], ["ADDED", "b"]]);
    expect(await watch({ sendInitialEvents: "false", resourceVersionMatch: "NotOlderThan", timeoutSeconds: "1" }))
      .toEqual([]);
    const refused = async (query: string) => {
      const r = await api(t, "GET", `${cms(ns)}?watch=true&${query}`);
      return [r.status, r.body.message];
    };
    const invalid = (why: string) => [422, `ListOptions.meta.k8s.io "" is invalid: ${why}`];
    expect(await refused("sendInitialEvents=true&allowWatchBookmarks=true")).toEqual(invalid("resourceVersionMatch: "
      + "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
    expect(await refused("resourceVersion=1&resourceVersionMatch=Exact")).toEqual(invalid("[resourceVersionMatch: "
      + "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, "
      + 'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]'));
  }, 60_000);
});
