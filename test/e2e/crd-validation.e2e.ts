// CRD schema value validation as kube-apiserver words it, on each target (the sandbox checked
// against the real server): required properties, string lengths and patterns, enums, numeric
// bounds and multipleOf, array and map sizes, on create and on a /status write. One property
// fails per case where the real server's order between properties is a Go map's (random); within
// one property, and between a property and the required ones after it, the order is upstream's.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./crd-validation.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { createNamespace, eventually, rawRequest, uniqueName } from "./harness/kube.ts";
import { ROOT } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const VALID = { greeting: "hello", size: 3 };
const CRDS: Resource = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true };

/** A CRD of its own group whose `spec.name` is a string, at most `maxLength` long when given. */
function gadgets(group: string, maxLength?: number): KubeObject {
  const name = maxLength === undefined ? { type: "string" } : { type: "string", maxLength };
  return {
    apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: `gadgets.${group}` },
    spec: {
      group, scope: "Namespaced", names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { name, colour: { type: "string" } } } } } } }],
    },
  };
}

/** Each case: the spec sent, and the message after `KobunCheck.e2e.kobun.dev "<name>" is invalid: `. */
const CASES: [string, Record<string, unknown>, string][] = [
  ["required", {}, "[spec.greeting: Required value, spec.size: Required value]"],
  ["minLength", { ...VALID, greeting: "" }, `spec.greeting: Invalid value: "": spec.greeting in body should be at least 1 chars long`],
  ["maxLength first", { ...VALID, greeting: "Much Too Long" }, "spec.greeting: Too long: may not be more than 8 bytes"],
  ["pattern", { ...VALID, greeting: "Hi!" }, `spec.greeting: Invalid value: "Hi!": spec.greeting in body should match '^[a-z ]+$'`],
  ["string enum", { ...VALID, mode: "bogus" }, `spec.mode: Unsupported value: "bogus": supported values: "full", "delta"`],
  ["integer enum", { ...VALID, level: 3 }, `spec.level: Unsupported value: 3: supported values: "1", "2"`],
  ["minimum", { ...VALID, size: 0 }, "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"],
  ["maximum", { ...VALID, size: 101 }, "spec.size: Invalid value: 101: spec.size in body should be less than or equal to 100"],
  ["multipleOf, then minimum", { ...VALID, step: 7 }, "[spec.step: Invalid value: 7: spec.step in body should be a multiple of 5, spec.step: Invalid value: 7: spec.step in body should be greater than or equal to 10]"],
  ["exclusiveMaximum", { ...VALID, ratio: 1 }, "spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1"],
  ["items, then maxItems", { ...VALID, tags: ["abcd", "b", "c"] }, "[spec.tags[0]: Too long: may not be more than 3 bytes, spec.tags: Too many: 3: must have at most 2 items]"],
  ["minItems", { ...VALID, tags: [] }, "spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"],
  ["maxProperties", { ...VALID, labels: { a: "1", b: "2" } }, "spec.labels: Too many: 2: must have at most 1 item"],
  ["a property, then required", { size: 0 }, "[spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1, spec.greeting: Required value]"],
  ["a date-time", { ...VALID, at: "yesterday" }, `spec.at: Invalid value: "yesterday": spec.at in body must be of type date-time: "yesterday"`],
  ["a date-time's day", { ...VALID, at: "2026-02-30T10:00:00Z" }, `spec.at: Invalid value: "2026-02-30T10:00:00Z": spec.at in body must be of type date-time: "2026-02-30T10:00:00Z"`],
  ["a date-time's hour", { ...VALID, at: "2026-02-03T24:00:00+01:00" }, `spec.at: Invalid value: "2026-02-03T24:00:00+01:00": spec.at in body must be of type date-time: "2026-02-03T24:00:00+01:00"`],
  ["a set's repeat, said once", { ...VALID, kinds: ["a", "b", "a", "a"] }, `spec.kinds[2]: Duplicate value: "a"`],
  ["a set of integers' repeat", { ...VALID, sizes: [1, 1] }, "spec.sizes[1]: Duplicate value: 1"],
  ["a map's repeated key", { ...VALID, ports: [{ name: "http", port: 80 }, { name: "http", port: 8080 }] }, `spec.ports[1]: Duplicate value: {"name":"http"}`],
  ["a map's repeated keys", { ...VALID, routes: [{ host: "h", path: "/" }, { host: "h", path: "/", weight: 2 }] }, `spec.routes[1]: Duplicate value: {"host":"h","path":"/"}`],
];

describe.each(selectedTargets())("CRD schema value validation against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "test/e2e/crds/kobunchecks.crd.yaml")], cleanup: [] });

  test("each broken constraint is refused with upstream's 422, word for word", async () => {
    const { client } = need();
    const ns = await createNamespace(client, "e2e-checks");
    const path = `/apis/e2e.kobun.dev/v1/namespaces/${ns}/kobunchecks`;
    const answers: string[] = [];
    for (const [what, spec, expected] of CASES) {
      const name = `c-${answers.length}`;
      const response = await rawRequest(client, "POST", path, { apiVersion: "e2e.kobun.dev/v1", kind: "KobunCheck", metadata: { name }, spec });
      const body = (await response.json()) as { message?: string };
      answers.push(`${what}: ${response.status} ${body.message}`);
      expect(answers.at(-1)).toBe(`${what}: 422 KobunCheck.e2e.kobun.dev "${name}" is invalid: ${expected}`);
    }
  }, 30_000);

  test("the causes name each field and reason; a valid object is stored; /status is checked too", async () => {
    const { client } = need();
    const ns = await createNamespace(client, "e2e-checks");
    const path = `/apis/e2e.kobun.dev/v1/namespaces/${ns}/kobunchecks`;
    const refused = await rawRequest(client, "POST", path, { apiVersion: "e2e.kobun.dev/v1", kind: "KobunCheck", metadata: { name: "r" }, spec: { greeting: "", mode: "x", labels: { a: "1", b: "2" } } });
    const status = (await refused.json()) as { details?: { causes?: { reason: string; field: string }[] } };
    const causes = (status.details?.causes ?? []).map(({ reason, field }) => `${field} ${reason}`).sort();
    expect(causes).toEqual(["spec.greeting FieldValueInvalid", "spec.labels FieldValueTooMany", "spec.mode FieldValueNotSupported", "spec.size FieldValueRequired"]);

    const created = await rawRequest(client, "POST", path, { apiVersion: "e2e.kobun.dev/v1", kind: "KobunCheck", metadata: { name: "ok" }, spec: { ...VALID, step: 15, ratio: 0.5, mode: "delta", level: 2, tags: ["a"], labels: { a: "1" } } });
    expect(created.status).toBe(201);
    const badStatus = await rawRequest(client, "PATCH", `${path}/ok/status`, { status: { phase: "Gone" } }, "application/merge-patch+json");
    expect(`${badStatus.status} ${((await badStatus.json()) as { message?: string }).message}`)
      .toBe(`422 KobunCheck.e2e.kobun.dev "ok" is invalid: status.phase: Unsupported value: "Gone": supported values: "Pending", "Ready"`);
    const goodStatus = await rawRequest(client, "PATCH", `${path}/ok/status`, { status: { phase: "Ready" } }, "application/merge-patch+json");
    expect(goodStatus.status).toBe(200);
    const times = ["2026-12-07T10:00:00Z", "2026-12-07t10:00:00.123+02:00", "2024-02-29T23:59:59.5z"];
    const written = await Promise.all(times.map((at) => rawRequest(client, "PATCH", `${path}/ok`, { spec: { at } }, "application/merge-patch+json")));
    expect(written.map((answer) => answer.status)).toEqual([200, 200, 200]); // date-times as kube-openapi takes them
  }, 30_000);

  test("a CRD whose list-type map is keyed by an optional field without a default is refused", async () => {
    const { client } = need();
    const crd = gadgets(`keys-${uniqueName("e2e")}.kobun.dev`) as any;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.ports = {
      type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
      items: { type: "object", properties: { name: { type: "string" }, port: { type: "integer" } } },
    };
    const response = await rawRequest(client, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    const body = (await response.json()) as { message?: string };
    expect([response.status, body.message]).toEqual([422, `CustomResourceDefinition.apiextensions.k8s.io `
      + `"${crd.metadata.name}" is invalid: spec.validation.openAPIV3Schema.properties[spec].properties[ports].items`
      + ".properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have "
      + "a default or be a required property"]);
  }, 30_000);

  test("ratcheting: a value stored before its CRD tightened stays writable while unchanged, not when changed", async () => {
    const { client } = need();
    const group = `${uniqueName("g")}.e2e.kobun.dev`;
    const kind: Resource = { group, version: "v1", plural: "gadgets", kind: "Gadget", namespaced: true, statusSubresource: false };
    await client.create(CRDS, null, gadgets(group));
    try {
      await eventually("the CRD served", () =>
        client.create(kind, "default", { apiVersion: `${group}/v1`, kind: "Gadget", metadata: { name: "old" }, spec: { name: "a long name", colour: "red" } }).catch(() => undefined), { timeoutMs: 30_000 });
      const current = await client.get(CRDS, null, `gadgets.${group}`);
      await client.replace(CRDS, null, `gadgets.${group}`, { ...gadgets(group, 4), metadata: current.metadata });
      const path = `/apis/${group}/v1/namespaces/default/gadgets`;
      const refusedNew = await eventually("the tightened schema in force", async () => {
        const response = await rawRequest(client, "POST", path, { apiVersion: `${group}/v1`, kind: "Gadget", metadata: { name: uniqueName("new") }, spec: { name: "too long" } });
        return response.status === 422 ? ((await response.json()) as { message: string }).message : undefined;
      }, { timeoutMs: 30_000 });
      expect(refusedNew).toEndWith("is invalid: spec.name: Too long: may not be more than 4 bytes");

      const otherField = await rawRequest(client, "PATCH", `${path}/old`, { spec: { colour: "blue" } }, "application/merge-patch+json");
      expect(otherField.status).toBe(200);
      const changed = await rawRequest(client, "PATCH", `${path}/old`, { spec: { name: "another long name" } }, "application/merge-patch+json");
      expect(`${changed.status} ${((await changed.json()) as { message?: string }).message}`)
        .toBe(`422 Gadget.${group} "old" is invalid: spec.name: Too long: may not be more than 4 bytes`);
    } finally {
      await client.delete(CRDS, null, `gadgets.${group}`);
    }
  }, 60_000);
});
