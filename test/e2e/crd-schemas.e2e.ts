// The CRD schemas of item 4 of issue 35, on each target: every TypeBox construct defineResource
// takes becomes a CRD the real server accepts (a Record a map that keeps its entries, T | Null a
// nullable field), and the constructs a structural schema cannot say are refused by the sandbox
// with the real server's words: the expected texts below are kube-apiserver's, so one run on
// each target proves both.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./crd-schemas.e2e.ts

import { describe, expect, test } from "bun:test";
import { Type } from "typebox";
import { defineResource } from "../../src/index.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { CRDS, eventually, rawRequest, uniqueName, warningsOf } from "./harness/kube.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

/** Every construct with a CRD form, as an author writes it. */
function everything(group: string) {
  const spec = Type.Object({
    labels: Type.Record(Type.String(), Type.String()),
    limits: Type.Optional(Type.Record(Type.String(), Type.Object({ cpu: Type.Integer({ format: "int32" }) }))),
    owner: Type.Union([Type.String({ $id: "Owner" }), Type.Null()]),
    mode: Type.Union([Type.Literal("full"), Type.Literal("delta"), Type.Null()]),
    switch: Type.Optional(Type.Union([Type.Literal("on"), Type.Null()])),
    phase: Type.Optional(Type.Union([Type.Union([Type.Literal("up"), Type.Literal("down")]), Type.Null()])),
    pick: Type.Optional(Type.Union([Type.Enum(["x", "y"]), Type.Null()])),
    level: Type.Optional(Type.Enum([1, 2, 3])),
    kind: Type.Optional(Type.Literal("gadget")),
    port: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
    tags: Type.Optional(Type.Array(Type.String(), { uniqueItems: true })),
    target: Type.Optional(Type.Union([Type.Object({ url: Type.String() }), Type.Object({ service: Type.String() })])),
    both: Type.Optional(Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Optional(Type.Number()) })])),
    anything: Type.Optional(Type.Unknown()),
    strict: Type.Optional(Type.Object({ x: Type.String() }, { additionalProperties: false })),
    ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })),
    raw: Type.Optional(Type.String({ contentEncoding: "base64", examples: ["AA=="], $comment: "bytes" })),
  });
  return defineResource({ group, kind: "Gadget", plural: "gadgets", schema: { spec, status: Type.Object({ seen: Type.Optional(Type.Record(Type.String(), Type.Boolean())) }) } });
}

/** A CRD of its own group whose spec.x is `x` (and, when given, a second version v2 whose spec.x is `x2`). */
function crdWith(x: unknown, x2?: unknown): KubeObject {
  const group = `${uniqueName("s")}.e2e.kobun.dev`;
  const version = (name: string, schema: unknown, storage: boolean) =>
    ({ name, served: true, storage, schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { x: schema } } } } } });
  return {
    apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: `things.${group}` },
    spec: { group, scope: "Namespaced", names: { plural: "things", kind: "Thing" }, versions: [version("v1", x, true), ...(x2 === undefined ? [] : [version("v2", x2, false)])] },
  };
}

const AT = "spec.validation.openAPIV3Schema.properties[spec].properties[x]";
const TYPES = `supported values: "array", "boolean", "integer", "number", "object", "string"`;
/** What TypeBox writes (or an author could) that the real server refuses, and its words (after `is invalid: `). */
const REFUSED: [string, unknown, string, unknown?][] = [
  ["Type.Record as written", { type: "object", patternProperties: { "^.*$": { type: "integer" } } }, `${AT}.patternProperties: Forbidden: patternProperties is not supported`],
  ["Type.Ref", { $ref: "Foo" }, `${AT}.$ref: Forbidden: $ref is not supported`],
  ["id", { type: "string", id: "Foo" }, `${AT}.id: Forbidden: id is not supported`],
  ["Type.Tuple", { type: "array", additionalItems: false, items: [{ type: "string" }, { type: "number" }], minItems: 2 }, `[${AT}.additionalItems: Forbidden: additionalItems is not supported, ${AT}.items: Forbidden: items must be a schema object and not an array]`],
  ["uniqueItems", { type: "array", items: { type: "string" }, uniqueItems: true }, `${AT}.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`],
  ["definitions", { type: "object", definitions: { a: { type: "string" } } }, `${AT}.definitions: Forbidden: definitions is not supported`],
  ["additionalProperties false beside properties", { type: "object", properties: { a: { type: "string" } }, additionalProperties: false }, `${AT}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`],
  ["Type.Null", { type: "null" }, `[${AT}.type: Unsupported value: "null": ${TYPES}, ${AT}.type: Forbidden: type cannot be set to null, use nullable as an alternative]`],
  ["T | Null as written", { anyOf: [{ type: "string" }, { type: "null" }] }, `[${AT}.anyOf[0].type: Forbidden: must be empty to be structural, ${AT}.anyOf[1].type: Forbidden: must be empty to be structural, ${AT}.type: Required value: must not be empty for specified object fields, ${AT}.anyOf[1].type: Unsupported value: "null": ${TYPES}, ${AT}.anyOf[1].type: Forbidden: type cannot be set to null, use nullable as an alternative]`],
  ["Type.Enum as written", { enum: ["a", "b"] }, `${AT}.type: Required value: must not be empty for specified object fields`],
  ["Type.Intersect as written", { allOf: [{ type: "object", properties: { a: { type: "string" } } }, { type: "object", properties: { b: { type: "string" } } }] }, `[${AT}.allOf[0].properties[a].type: Forbidden: must be empty to be structural, ${AT}.allOf[0].type: Forbidden: must be empty to be structural, ${AT}.allOf[1].properties[b].type: Forbidden: must be empty to be structural, ${AT}.allOf[1].type: Forbidden: must be empty to be structural, ${AT}.type: Required value: must not be empty for specified object fields]`],
  ["an array without items", { type: "array" }, `${AT}.items: Required value: must be specified`],
  ["preserve-unknown-fields false", { type: "object", "x-kubernetes-preserve-unknown-fields": false }, `${AT}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`],
  ["type bigint", { type: "bigint" }, `${AT}.type: Unsupported value: "bigint": ${TYPES}`],
  ["versions with schemas of their own", { type: "object", patternProperties: { "^.*$": { type: "string" } } }, "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[x].patternProperties: Forbidden: patternProperties is not supported", { type: "string" }],
];

describe.each(selectedTargets())("CRD schemas from TypeBox against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("what the real server refuses in a CRD schema is refused, word for word", async () => {
    const { client } = need();
    const answers: string[] = [];
    const expected: string[] = [];
    for (const [what, x, words, x2] of REFUSED) {
      const crd = crdWith(x, x2);
      const response = await rawRequest(client, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
      const body = (await response.json()) as { message?: string; details?: { causes?: { field: string }[] } };
      answers.push(`${what}: ${response.status} ${body.message}`);
      expected.push(`${what}: 422 CustomResourceDefinition.apiextensions.k8s.io "${crd.metadata.name}" is invalid: ${words}`);
      if (response.status === 201) await client.delete(CRDS, null, crd.metadata.name!);
    }
    expect(answers).toEqual(expected);
  }, 30_000);

  test("what a schema node has no field for ($id, const, examples) is dropped, warned of in document order", async () => {
    const { client } = need();
    const crd = crdWith({ type: "object", $id: "Thing", properties: { mode: { type: "string", const: "on", examples: ["on"] } }, anyOf: [{ required: ["mode"], $comment: "c" }] });
    const strict = await rawRequest(client, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldValidation=Strict", crd);
    const at = "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.x";
    expect(`${strict.status} ${((await strict.json()) as { message?: string }).message}`).toBe(`400 CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: strict decoding error: unknown field "${at}.$id", unknown field "${at}.properties.mode.const", unknown field "${at}.properties.mode.examples", unknown field "${at}.anyOf[0].$comment"`);
    const created = await rawRequest(client, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    try {
      expect(created.status).toBe(201);
      expect(warningsOf(created)).toEqual([`unknown field "${at}.$id"`, `unknown field "${at}.properties.mode.const"`, `unknown field "${at}.properties.mode.examples"`, `unknown field "${at}.anyOf[0].$comment"`]);
      const stored = (await created.json()) as any;
      expect(stored.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.x).toEqual({ type: "object", properties: { mode: { type: "string" } }, anyOf: [{ required: ["mode"] }] });
    } finally {
      if (created.status === 201) await client.delete(CRDS, null, crd.metadata.name!);
    }
  }, 30_000);

  test("a null of a nullable enum field is refused by the enum (why defineResource writes a pattern there)", async () => {
    const { client } = need();
    const crd = crdWith({ type: "string", nullable: true, enum: ["a", "b"] });
    const group = (crd.spec as { group: string }).group;
    await client.create(CRDS, null, crd);
    try {
      const things: Resource = { group, version: "v1", plural: "things", kind: "Thing", namespaced: true, statusSubresource: false };
      await eventually("the CRD served", () => client.list(things, { namespace: "default" }).catch(() => undefined), { timeoutMs: 30_000 });
      const refused = await rawRequest(client, "POST", `/apis/${group}/v1/namespaces/default/things`, { apiVersion: `${group}/v1`, kind: "Thing", metadata: { name: "n" }, spec: { x: null } });
      expect(`${refused.status} ${((await refused.json()) as { message: string }).message}`)
        .toBe(`422 Thing.${group} "n" is invalid: spec.x: Unsupported value: null: supported values: "a", "b"`);
    } finally {
      await client.delete(CRDS, null, crd.metadata.name!);
    }
  }, 60_000);

  test("every construct defineResource takes makes a CRD the server accepts, and a map keeps its entries", async () => {
    const { client } = need();
    const group = `${uniqueName("all")}.e2e.kobun.dev`;
    const token = everything(group);
    const created = await rawRequest(client, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", token.crd);
    expect(`${created.status} ${created.status === 201 ? "" : ((await created.json()) as { message?: string }).message}`).toBe("201 ");
    expect(created.headers.get("warning")).toBeNull();
    try {
      const gadgets: Resource = { group, version: "v1", plural: "gadgets", kind: "Gadget", namespaced: true, statusSubresource: true };
      const spec = { labels: { team: "a", tier: "web" }, limits: { main: { cpu: 2 } }, owner: null, mode: "delta", level: 2, kind: "gadget", port: "http", tags: ["x", "y"], target: { url: "https://a" }, both: { a: "1", b: 2 }, anything: [1, "two"], strict: { x: "y", extra: 1 }, ratio: 0.5, raw: "AA==" };
      const stored = await eventually("the CRD served", () =>
        client.create(gadgets, "default", { apiVersion: `${group}/v1`, kind: "Gadget", metadata: { name: uniqueName("g") }, spec }).catch(() => undefined), { timeoutMs: 30_000 });
      expect(stored.spec).toEqual({ ...spec, strict: { x: "y" } });
      const refused = await rawRequest(client, "POST", `/apis/${group}/v1/namespaces/default/gadgets`, { apiVersion: `${group}/v1`, kind: "Gadget", metadata: { name: "bad" }, spec: { labels: { a: 1 }, owner: null, mode: null } });
      expect(refused.status).toBe(422);
      expect(((await refused.json()) as { message: string }).message).toContain(`spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"`);
      const bounded = await rawRequest(client, "POST", `/apis/${group}/v1/namespaces/default/gadgets`, { apiVersion: `${group}/v1`, kind: "Gadget", metadata: { name: "edge" }, spec: { labels: {}, owner: null, mode: null, switch: null, phase: null, pick: null, ratio: 1 } });
      expect(`${bounded.status} ${((await bounded.json()) as { message: string }).message}`)
        .toBe(`422 Gadget.${group} "edge" is invalid: spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1`);
      const notListed = await rawRequest(client, "POST", `/apis/${group}/v1/namespaces/default/gadgets`, { apiVersion: `${group}/v1`, kind: "Gadget", metadata: { name: "other" }, spec: { labels: {}, owner: null, mode: "bogus" } });
      expect(`${notListed.status} ${((await notListed.json()) as { message: string }).message}`)
        .toBe(`422 Gadget.${group} "other" is invalid: spec.mode: Invalid value: "bogus": spec.mode in body should match '^(full|delta)$'`);
    } finally {
      await client.delete(CRDS, null, token.crd.metadata.name!);
    }
  }, 60_000);
});
