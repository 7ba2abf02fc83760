// A Secret's `stringData`, on the real kube-apiserver as on the sandbox: a write-only field,
// merged into `data` (base64-encoded, a stringData key winning over the same data key) by
// create, update (PUT), merge, strategic and JSON patches and server-side apply, so that what is
// stored, answered, listed, watched and counted in the table's Data column has `data` only. An
// empty `data` is dropped; a null value is taken as "". Server-side apply owns the stringData
// fields it applied (f:stringData), an Update owns the data it leaves. A value that is not a
// string is refused with the real server's words: 400 on POST/PUT, 422 on a patch, 500 on apply;
// its keys are data's, held to the config-key rule. Admission webhooks see the merged object.
// kubectl's apply (client- and server-side), get and describe of such a manifest agree.
// The values here are test strings, never printed.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./secret-string-data.e2e.ts

import { describe, expect, test } from "bun:test";
import type { Resource } from "../../src/kube/types.ts";
import { createNamespace, eventually, rawRequest, rawWatch, uniqueName } from "./harness/kube.ts";
import { Kubectl, normalise } from "./harness/kubectl.ts";
import { recordingWebhook } from "./harness/recording-webhook.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
const MERGE = "application/merge-patch+json";
const STRATEGIC = "application/strategic-merge-patch+json";
const JSON_PATCH = "application/json-patch+json";
const APPLY = "application/apply-patch+yaml";

/** What a test looks at of an answer: its code, and of a Secret its data and stringData (of a Status, the Status). */
function requests(t: Target, base: string) {
  return async (method: string, path: string, body?: unknown, contentType?: string) => {
    const response = await rawRequest(t.client, method, `${base}${path}`, body, contentType);
    return { status: response.status, body: (await response.json()) as any };
  };
}
const contents = (o: any) => ({ data: o.data, stringData: o.stringData });
const applied = (name: string, rest: Record<string, unknown>) => ({ apiVersion: "v1", kind: "Secret", metadata: { name }, ...rest });
const CONFIGURATIONS: Resource = { group: "admissionregistration.k8s.io", version: "v1", plural: "validatingwebhookconfigurations", kind: "ValidatingWebhookConfiguration", namespaced: false, statusSubresource: false };

/** A webhook on Secrets recording what each call's object holds: its data's keys, whether it has stringData. */
const recordingSecrets = (run: string) => recordingWebhook(run, ["secrets"], ["CREATE", "UPDATE"],
  (request) => [request.operation, request.name, Object.keys(request.object.data ?? {}).sort(), "stringData" in request.object]);

const fieldsOf = (o: any, manager: string) => o.metadata.managedFields.find((m: any) => m.manager === manager)?.fieldsV1;

describe.each(selectedTargets())("Secret stringData on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("every write merges stringData into data; reads, lists, the watch and the table see data only", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-stringdata");
    const base = `/api/v1/namespaces/${ns}/secrets`;
    const send = requests(t, base);
    const since = (await send("GET", "")).body.metadata.resourceVersion;
    const watched = rawWatch(t.client, base, { resourceVersion: since }, { timeoutMs: 30_000, until: (ev) => ev.object?.metadata?.name === "marker" });
    watched.catch(() => {}); // awaited below; a failure before then must not leave it unhandled

    const created = await send("POST", "", { metadata: { name: "s" }, data: { a: b64("old"), keep: b64("k") }, stringData: { a: "new", s: "str" } });
    expect(created.status).toBe(201);
    const after1 = { a: b64("new"), keep: b64("k"), s: b64("str") };
    expect(contents(created.body)).toEqual({ data: after1, stringData: undefined });
    expect(fieldsOf(created.body, "Bun")).toEqual({ "f:data": { ".": {}, "f:a": {}, "f:keep": {}, "f:s": {} }, "f:type": {} });
    expect(contents((await send("GET", "/s")).body)).toEqual({ data: after1, stringData: undefined });

    const put = await send("PUT", "/s", { ...created.body, stringData: { keep: "put" } });
    const after2 = { ...after1, keep: b64("put") };
    expect([put.status, contents(put.body)]).toEqual([200, { data: after2, stringData: undefined }]);
    const merged = await send("PATCH", "/s", { stringData: { m: "merge" } }, MERGE);
    const after3 = { ...after2, m: b64("merge") };
    expect([merged.status, contents(merged.body)]).toEqual([200, { data: after3, stringData: undefined }]);
    // the same stringData again changes nothing: no new resourceVersion
    const again = await send("PATCH", "/s", { stringData: { m: "merge" } }, MERGE);
    expect(again.body.metadata.resourceVersion).toBe(merged.body.metadata.resourceVersion);
    const strategic = await send("PATCH", "/s", { stringData: { s2: "x" } }, STRATEGIC);
    const after4 = { ...after3, s2: b64("x") };
    expect([strategic.status, contents(strategic.body)]).toEqual([200, { data: after4, stringData: undefined }]);
    const jsonPatched = await send("PATCH", "/s", [{ op: "remove", path: "/data/m" }, { op: "add", path: "/stringData", value: { j: "json" } }], JSON_PATCH);
    const { m: _m, ...after5 } = { ...after4, j: b64("json") };
    expect([jsonPatched.status, contents(jsonPatched.body)]).toEqual([200, { data: after5, stringData: undefined }]);

    // server-side apply owns the stringData it applied; leaving a key out later leaves its data
    const apply1 = await send("PATCH", "/s?fieldManager=ap", applied("s", { stringData: { ap: "one" } }), APPLY);
    expect([apply1.status, contents(apply1.body)]).toEqual([200, { data: { ...after5, ap: b64("one") }, stringData: undefined }]);
    expect(fieldsOf(apply1.body, "ap")).toEqual({ "f:stringData": { "f:ap": {} } });
    const apply2 = await send("PATCH", "/s?fieldManager=ap", applied("s", { data: { k: b64("d") }, stringData: { k: "sd" } }), APPLY);
    const after6 = { ...after5, ap: b64("one"), k: b64("sd") };
    expect([apply2.status, contents(apply2.body)]).toEqual([200, { data: after6, stringData: undefined }]);
    expect(fieldsOf(apply2.body, "ap")).toEqual({ "f:data": { "f:k": {} }, "f:stringData": { "f:k": {} } });
    const appliedNew = await send("PATCH", "/n?fieldManager=ap", applied("n", { stringData: { x: "y" } }), APPLY);
    expect([appliedNew.status, contents(appliedNew.body)]).toEqual([201, { data: { x: b64("y") }, stringData: undefined }]);

    const dry = await send("POST", "?dryRun=All", { metadata: { name: "dry" }, stringData: { a: "c" } });
    expect([dry.status, contents(dry.body)]).toEqual([201, { data: { a: b64("c") }, stringData: undefined }]);
    expect((await send("GET", "/dry")).status).toBe(404);

    const listed = (await send("GET", "")).body.items.map((o: any) => [o.metadata.name, contents(o)]);
    expect(listed).toEqual([["n", { data: { x: b64("y") }, stringData: undefined }], ["s", { data: after6, stringData: undefined }]]);
    await send("POST", "", { metadata: { name: "marker" } });
    const { events, ended } = await watched;
    expect(ended).toBe("until");
    expect(events.filter((ev) => ev.object.stringData !== undefined)).toEqual([]);
    expect(events.filter((ev) => ev.object.metadata.name === "s").map((ev) => [ev.type, ev.object.data]))
      .toEqual([["ADDED", after1], ...[after2, after3, after4, after5, { ...after5, ap: b64("one") }, after6].map((d) => ["MODIFIED", d])]);

    const table = await fetch(`${t.client.server}${base}`, {
      headers: { ...(await t.client.connection.authHeaders()), accept: "application/json;as=Table;v=v1;g=meta.k8s.io" },
      ...(t.client.connection.tls ? { tls: t.client.connection.tls } : {}),
    } as RequestInit);
    const rows = ((await table.json()) as any).rows.map((r: any) => r.cells.slice(0, 3));
    expect(rows).toEqual([["marker", "Opaque", 0], ["n", "Opaque", 1], ["s", "Opaque", Object.keys(after6).length]]);
  }, 60_000);

  test("an empty stringData adds nothing, an empty data is dropped, a null value is taken as \"\"", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-stringdata");
    const send = requests(t, `/api/v1/namespaces/${ns}/secrets`);
    const cases: [string, Record<string, unknown>, unknown][] = [
      ["empty", { stringData: {} }, undefined],
      ["both-empty", { data: {}, stringData: {} }, undefined],
      ["data-empty", { data: {} }, undefined],
      ["null", { stringData: null }, undefined],
      ["null-value", { stringData: { a: null } }, { a: "" }],
      ["empty-string", { stringData: { a: "" } }, { a: "" }],
    ];
    for (const [name, fields, data] of cases) {
      const made = await send("POST", "", { metadata: { name }, ...fields });
      expect([name, made.status, contents(made.body)]).toEqual([name, 201, { data, stringData: undefined }]);
      expect([name, contents((await send("GET", `/${name}`)).body)]).toEqual([name, { data, stringData: undefined }]);
    }
    const patched = await send("PATCH", "/null-value", { stringData: {} }, MERGE);
    expect([patched.status, contents(patched.body)]).toEqual([200, { data: { a: "" }, stringData: undefined }]);
    // a JSON patch leaves null as null: taken as "" too
    const nulled = await send("PATCH", "/empty", [{ op: "add", path: "/stringData", value: { n: null } }], JSON_PATCH);
    expect([nulled.status, contents(nulled.body)]).toEqual([200, { data: { n: "" }, stringData: undefined }]);
  }, 60_000);

  test("a stringData value that is not a string: 400 on POST and PUT, 422 on a patch, 500 on apply; a bad key: 422; nothing stored", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-stringdata");
    const send = requests(t, `/api/v1/namespaces/${ns}/secrets`);
    const decoding = (what: string, type: string) =>
      `Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal ${what} into Go struct field Secret.stringData of type ${type}`;
    const badRequest = (message: string) => ({ status: 400, body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason: "BadRequest", code: 400 } });

    expect(await send("POST", "", { metadata: { name: "bad" }, stringData: { a: 1 } })).toEqual(badRequest(decoding("number", "string")));
    expect(await send("POST", "", { metadata: { name: "bad" }, stringData: { ok: "x", a: true } })).toEqual(badRequest(decoding("bool", "string")));
    expect(await send("POST", "", { metadata: { name: "bad" }, stringData: { a: { b: "c" } } })).toEqual(badRequest(decoding("object", "string")));
    expect(await send("POST", "", { metadata: { name: "bad" }, stringData: ["x"] })).toEqual(badRequest(decoding("array", "map[string]string")));
    expect(await send("POST", "", { metadata: { name: "bad" }, stringData: "x" })).toEqual(badRequest(decoding("string", "map[string]string")));
    expect((await send("GET", "/bad")).status).toBe(404);

    const made = await send("POST", "", { metadata: { name: "s" }, stringData: { x: "y" } });
    expect(made.status).toBe(201);
    const rv = made.body.metadata.resourceVersion;
    expect(await send("PUT", "/s", { metadata: { name: "s" }, stringData: { a: 2 } })).toEqual(badRequest(decoding("number", "string")));

    // a merge or JSON patch: the patched object in the message (as the server marshals it), then why
    for (const [body, type] of [[{ stringData: { a: 1 } }, MERGE], [[{ op: "add", path: "/stringData", value: { a: 2 } }], JSON_PATCH]] as const) {
      const refused = await send("PATCH", "/s", body, type);
      expect([refused.status, refused.body.reason, refused.body.details.causes.map((c: any) => c.field)]).toEqual([422, "Invalid", ["patch"]]);
      expect(refused.body.message).toStartWith(' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"v1\\",\\"data\\":');
      expect(refused.body.message).toEndWith(`": ${decoding("number", "string").replace(/^.*?: json/, "json")}`);
    }
    const invalidPatch = (value: string, why: string) => {
      const message = `Invalid value: ${JSON.stringify(value)}: ${why}`;
      return { status: 422, body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: ` "" is invalid: patch: ${message}`, reason: "Invalid", details: { causes: [{ reason: "FieldValueInvalid", message, field: "patch" }] }, code: 422 } };
    };
    expect(await send("PATCH", "/s", { stringData: { a: 7 } }, STRATEGIC)).toEqual(invalidPatch("map[stringData:map[a:7]]", "cannot convert int64 to string"));
    expect(await send("PATCH", "/s", { stringData: { a: [1, "x", null, true] } }, STRATEGIC))
      .toEqual(invalidPatch("map[stringData:map[a:[1 x <nil> true]]]", "unrecognized type: string"));
    expect(await send("PATCH", "/s", { stringData: "x" }, STRATEGIC)).toEqual(invalidPatch("map[stringData:x]", "cannot restore map from string"));
    expect(await send("PATCH", "/s", { stringData: ["x"] }, STRATEGIC)).toEqual(invalidPatch("map[stringData:[x]]", "cannot restore map from slice"));

    const internal = (message: string) => ({ status: 500, body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: `failed to create typed patch object (/s; /v1, Kind=Secret): ${message}`, code: 500 } });
    expect(await send("PATCH", "/s?fieldManager=ap", applied("s", { stringData: { a: 1.5 } }), APPLY))
      .toEqual(internal(".stringData.a: expected string, got &value.valueUnstructured{Value:1.5}"));
    expect(await send("PATCH", "/s?fieldManager=ap", applied("s", { stringData: { a: { b: ["x", 1, null] } } }), APPLY))
      .toEqual(internal('.stringData.a: expected string, got &value.valueUnstructured{Value:map[string]interface {}{"b":[]interface {}{"x", 1, interface {}(nil)}}}'));
    expect(await send("PATCH", "/s?fieldManager=ap", applied("s", { stringData: true }), APPLY)).toEqual(internal(".stringData: expected map, got &{true}"));

    // once merged, stringData's keys are data's, held to the config-key rule (one bad key each: the server's map order is random)
    const badKey = (key: string, why: string) => {
      const message = `Invalid value: ${JSON.stringify(key)}: ${why}`;
      return { status: 422, body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: `Secret "s" is invalid: data[${key}]: ${message}`, reason: "Invalid", details: { name: "s", kind: "Secret", causes: [{ reason: "FieldValueInvalid", message, field: `data[${key}]` }] }, code: 422 } };
    };
    const keyFormat = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
    expect(await send("PATCH", "/s", { stringData: { "a b": "x", ok: "y" } }, MERGE)).toEqual(badKey("a b", keyFormat));
    expect(await send("PUT", "/s", { metadata: { name: "s" }, stringData: { "..": "x" } })).toEqual(badKey("..", "must not be '..'"));
    expect(await send("PATCH", "/s?fieldManager=ap", applied("s", { stringData: { "..a": "x" } }), APPLY)).toEqual(badKey("..a", "must not start with '..'"));

    const stored = (await send("GET", "/s")).body;
    expect([stored.metadata.resourceVersion, contents(stored)]).toEqual([rv, { data: { x: b64("y") }, stringData: undefined }]);
  }, 60_000);

  test("kubectl: apply, re-apply, server-side apply, get and describe of a Secret written with stringData", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-stringdata");
    const k = new Kubectl(t.kubeconfigPath);
    try {
      const manifest = (strings: Record<string, string>) => JSON.stringify({ apiVersion: "v1", kind: "Secret", metadata: { name: "k", namespace: ns }, stringData: strings });
      const data = async () => JSON.parse(await k.ok(["get", "secret", "k", "-n", ns, "-o", "jsonpath={.data}"]));
      expect(await k.ok(["apply", "-f", k.file("one.json", manifest({ user: "u", pass: "p" }))])).toBe("secret/k created\n");
      expect(await data()).toEqual({ pass: b64("p"), user: b64("u") });
      expect(await k.ok(["get", "secret", "k", "-n", ns, "-o", "jsonpath={.stringData}"])).toBe("");
      // the re-apply's patch nulls the left-out key in stringData: the data it went into stays
      expect(await k.ok(["apply", "-f", k.file("two.json", manifest({ user: "u2" }))])).toBe("secret/k configured\n");
      expect(await data()).toEqual({ pass: b64("p"), user: b64("u2") });
      expect(await k.ok(["apply", "--server-side", "--field-manager=ssa", "-f", k.file("three.json", manifest({ token: "t" }))]))
        .toBe("secret/k serverside-applied\n");
      // kubectl hands what client-side apply owned (data, once merged) to the server-side manager, whose
      // configuration leaves it out: removed
      expect(await data()).toEqual({ token: b64("t") });
      // the type it dropped is defaulted again, owned by nobody
      const managed = JSON.parse(await k.ok(["get", "secret", "k", "-n", ns, "-o", "jsonpath={.metadata.managedFields}"]));
      expect(managed.map((m: any) => [m.manager, m.operation, m.fieldsV1])).toEqual([["ssa", "Apply", { "f:stringData": { "f:token": {} } }]]);
      expect(normalise(await k.ok(["get", "secrets", "k", "-n", ns]))).toBe("NAME  TYPE  DATA  AGE\nk  Opaque  1  <age>\n");
      const described = normalise(await k.ok(["describe", "secret", "k", "-n", ns]));
      expect(described.slice(described.indexOf("Type:"))).toBe("Type:  Opaque\n\nData\n====\ntoken:  1 bytes\n");
    } finally {
      k.close();
    }
  }, 60_000);

  test("admission webhooks see the merged data and no stringData, on create, PUT, patch and apply", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-stringdata");
    const send = requests(t, `/api/v1/namespaces/${ns}/secrets`);
    const run = uniqueName("sd");
    const labels = { run };
    const webhook = await recordingSecrets(run);
    try {
      await t.client.create(CONFIGURATIONS, null, webhook.configuration);
      // The API server loads a new configuration a moment after it is written.
      await eventually("the webhook called", async () => {
        await send("POST", "", { metadata: { name: uniqueName("probe"), labels } });
        return webhook.calls.length > 0 || undefined;
      }, { timeoutMs: 20_000, intervalMs: 100 });
      // What the webhook saw of each write: its last call. A patch the real server first applied to a
      // stale read is admitted again on the fresh object after the conflict (GuaranteedUpdate's retry),
      // so a write may call it twice; every call must see the merged data and no stringData.
      const calls: unknown[][] = [];
      const written = async (status: number, ...request: Parameters<typeof send>) => {
        webhook.calls.length = 0;
        expect((await send(...request)).status).toBe(status);
        expect(webhook.calls.length).toBeGreaterThan(0);
        expect(webhook.calls.filter((c) => c[3] !== false)).toEqual([]);
        calls.push(webhook.calls.at(-1)!);
      };
      await written(201, "POST", "", { metadata: { name: "w", labels }, data: { a: b64("1") }, stringData: { b: "2" } });
      await written(200, "PUT", "/w", { metadata: { name: "w", labels }, stringData: { c: "3" } });
      await written(200, "PATCH", "/w", { stringData: { d: "4" } }, MERGE);
      await written(200, "PATCH", "/w?fieldManager=ap", applied("w", { metadata: { name: "w", labels }, stringData: { e: "5" } }), APPLY);
      expect(calls).toEqual([
        ["CREATE", "w", ["a", "b"], false], ["UPDATE", "w", ["c"], false], ["UPDATE", "w", ["c", "d"], false], ["UPDATE", "w", ["c", "d", "e"], false],
      ]);
    } finally {
      await t.client.delete(CONFIGURATIONS, null, run).catch(() => {});
      webhook.server.stop(true);
    }
  }, 60_000);
});
