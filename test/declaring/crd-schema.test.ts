// defineResource's TypeBox → structural schema translation (src/declaring/crd-schema.ts): each
// construct with a CRD form gets it, each without is a RegistrationError naming the field. That
// kube-apiserver accepts the results is test/e2e/crd-schemas.e2e.ts's to prove.

import { describe, expect, test } from "bun:test";
import { Type, type TSchema } from "typebox";
import { defineResource } from "../../src/declaring/definition.ts";
import { RegistrationError } from "../../src/declaring/registration.ts";

let counter = 0;
/** the CRD schema of `spec.x` when the spec is `{ x: schema }` */
function specOf(x: TSchema): any {
  const kind = `Probe${++counter}`;
  const token = defineResource({ group: "probe.kobun.dev", kind, plural: `probes${counter}`, schema: { spec: Type.Object({ x }) } });
  return (token.crd.spec as any).versions[0].schema.openAPIV3Schema.properties.spec.properties.x;
}

function refusal(x: TSchema): string {
  const thrown = (() => {
    try {
      return specOf(x);
    } catch (e) {
      return e;
    }
  })();
  expect(thrown).toBeInstanceOf(RegistrationError);
  return (thrown as Error).message;
}

describe("defineResource writes what a CRD can say", () => {
  test("a Record is a map: additionalProperties, its values translated too", () => {
    expect(specOf(Type.Record(Type.String(), Type.Integer()))).toEqual({ type: "object", additionalProperties: { type: "integer" } });
    expect(specOf(Type.Record(Type.String(), Type.Union([Type.Literal("a"), Type.Literal("b")]))))
      .toEqual({ type: "object", additionalProperties: { type: "string", enum: ["a", "b"] } });
  });

  test("T | Null is nullable; literals an enum (with Null, a pattern, since no enum admits a null); Enum gets its type; Literal is a one-value enum", () => {
    expect(specOf(Type.Union([Type.String(), Type.Null()]))).toEqual({ type: "string", nullable: true });
    expect(specOf(Type.Union([Type.Object({ a: Type.String() }), Type.Null()])))
      .toEqual({ type: "object", required: ["a"], properties: { a: { type: "string" } }, nullable: true });
    expect(specOf(Type.Union([Type.Literal("a"), Type.Literal("b"), Type.Null()]))).toEqual({ type: "string", nullable: true, pattern: "^(a|b)$" });
    expect(specOf(Type.Union([Type.Literal("a.b"), Type.Literal("(c)"), Type.Null()]))).toEqual({ type: "string", nullable: true, pattern: "^(a\\.b|\\(c\\))$" });
    expect(specOf(Type.Enum(["x", "y"]))).toEqual({ type: "string", enum: ["x", "y"] });
    expect(specOf(Type.Enum([1, 2]))).toEqual({ type: "integer", enum: [1, 2] });
    expect(specOf(Type.Literal(3))).toEqual({ type: "number", enum: [3] });
  });

  test("a single nullable member carrying an enum (a Literal, a literal union, Type.Enum) gets the flat form: a pattern", () => {
    const Phase = Type.Union([Type.Literal("Running"), Type.Literal("Done")]);
    expect(specOf(Type.Union([Type.Literal("on"), Type.Null()]))).toEqual({ type: "string", nullable: true, pattern: "^(on)$" });
    expect(specOf(Type.Union([Phase, Type.Null()]))).toEqual({ type: "string", nullable: true, pattern: "^(Running|Done)$" });
    expect(specOf(Type.Union([Type.Enum(["x", "y"]), Type.Null()]))).toEqual({ type: "string", nullable: true, pattern: "^(x|y)$" });
    expect(specOf(Type.Union([Type.Literal("a", { description: "mode" }), Type.Null()])))
      .toEqual({ type: "string", description: "mode", nullable: true, pattern: "^(a)$" });
    expect(refusal(Type.Union([Type.Enum([1, 2]), Type.Null()]))).toMatch(/: spec\.x: a nullable enum has a CRD form only for strings/);
    expect(refusal(Type.Union([Type.Literal(true), Type.Null()]))).toMatch(/: spec\.x: a nullable enum has a CRD form only for strings/);
  });

  test("Integer | String is int-or-string; a union of objects merges; Intersect merges; Unknown keeps anything", () => {
    expect(specOf(Type.Union([Type.Integer(), Type.String()]))).toEqual({ "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] });
    expect(specOf(Type.Union([Type.Object({ a: Type.String(), c: Type.Integer() }), Type.Object({ b: Type.Number(), c: Type.Integer() })])))
      .toEqual({ type: "object", properties: { a: { type: "string" }, c: { type: "integer" }, b: { type: "number" } }, required: ["c"] });
    expect(specOf(Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Optional(Type.String()) })])))
      .toEqual({ type: "object", properties: { a: { type: "string" }, b: { type: "string" } }, required: ["a"] });
    expect(specOf(Type.Unknown())).toEqual({ "x-kubernetes-preserve-unknown-fields": true });
  });

  test("$id goes; uniqueItems of scalars is a set; additionalProperties false goes; integer formats stay", () => {
    expect(specOf(Type.String({ $id: "Name", minLength: 1 }))).toEqual({ type: "string", minLength: 1 });
    expect(specOf(Type.Array(Type.String(), { uniqueItems: true }))).toEqual({ type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" });
    expect(specOf(Type.Object({ a: Type.String() }, { additionalProperties: false }))).toEqual({ type: "object", required: ["a"], properties: { a: { type: "string" } } });
    expect(specOf(Type.Integer({ format: "int32" }))).toEqual({ type: "integer", format: "int32" });
    expect(specOf(Type.String({ contentEncoding: "base64", examples: ["AA=="], description: "raw" }))).toEqual({ type: "string", description: "raw" });
  });

  test("JSON Schema's numeric exclusive bounds become OpenAPI's boolean ones, the stricter bound kept", () => {
    expect(specOf(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }))).toEqual({ type: "number", minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true });
    expect(specOf(Type.Number({ minimum: 5, exclusiveMinimum: 0 }))).toEqual({ type: "number", minimum: 5 });
    expect(specOf(Type.Number({ maximum: 5, exclusiveMaximum: 5 }))).toEqual({ type: "number", maximum: 5, exclusiveMaximum: true });
  });

  test("what has no CRD form is a RegistrationError naming the field", () => {
    expect(refusal(Type.Tuple([Type.String(), Type.Number()]))).toMatch(/^defineResource\("Probe\d+"\): spec\.x: Type\.Tuple has no CRD form/);
    expect(refusal(Type.Object({ deep: Type.Array(Type.Ref("Foo")) }))).toMatch(/: spec\.x\.deep\[\*\]: Type\.Ref/);
    expect(refusal(Type.Record(Type.Number(), Type.String()))).toMatch(/: spec\.x: a CRD map has string keys of any form/);
    expect(refusal(Type.Union([Type.String(), Type.Number()]))).toMatch(/: spec\.x: a union of string \| number has no CRD form/);
    expect(refusal(Type.Array(Type.Object({ a: Type.String() }), { uniqueItems: true }))).toMatch(/: spec\.x: uniqueItems has a CRD form only/);
    expect(refusal(Type.Null())).toMatch(/: spec\.x: type "null" has no CRD form/);
    const keyed = (item: Parameters<typeof Type.Array>[0]) =>
      Type.Array(item, { "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] });
    expect(refusal(keyed(Type.Object({ name: Type.Optional(Type.String()) }))))
      .toMatch(/: spec\.x\[\*\]\.name: is in x-kubernetes-list-map-keys, so it must have a default or be a required/);
    expect(refusal(keyed(Type.Object({ name: Type.Object({}) })))).toMatch(/spec\.x\[\*\]\.name: a key .* must be a scalar/);
    expect(refusal(keyed(Type.String()))).toMatch(/: spec\.x: x-kubernetes-list-type: map needs items of type object/);
    expect(specOf(keyed(Type.Object({ name: Type.Optional(Type.String({ default: "main" })) }))).items.required)
      .toBeUndefined(); // a defaulted key is enough
    expect(refusal(Type.Union([Type.Object({ a: Type.String() }), Type.Object({ a: Type.Integer() })]))).toMatch(/: spec\.x\.a: the members of a union/);
  });
});
