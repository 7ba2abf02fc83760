// A resource made with defineResource has a status subresource, where kobun keeps its progress
// (status.kobun) beside the handlers' results, so that a create costs one PATCH. The CRD kobun
// writes must leave room for it: a status schema that pruned it made every object of every
// defined resource fall back to annotations, at two PATCHes per cycle and a warning per resource.

import { expect, test } from "bun:test";
import Type from "typebox";
import { defineResource, Registry } from "kobun";
import { startOperator } from "kobun/testing";

test("a defined resource's CRD keeps status.kobun, so a create handler costs exactly one PATCH", async () => {
  const registry = new Registry();
  const Notes = defineResource({
    group: "testing.kobun.dev", kind: "Note", plural: "notes",
    schema: { spec: Type.Object({ text: Type.String() }), status: Type.Object({ create_fn: Type.Optional(Type.Object({ length: Type.Integer() })) }) },
  });
  expect(Notes.crd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties.kobun).toEqual({ type: "object", "x-kubernetes-preserve-unknown-fields": true });
  registry.on.create(Notes, ({ spec }) => ({ length: spec.text.length }), { id: "create_fn" });
  await using kit = await startOperator({ registry, logLevel: "silent" });
  await kit.apply(Notes, { metadata: { name: "n" }, spec: { text: "four" } });
  const handled = await kit.until(Notes, "n", (o) => o.status?.create_fn);
  expect(handled.status?.create_fn).toEqual({ length: 4 });
  expect((handled.status as Record<string, unknown>).kobun).toBeDefined();
  expect(handled.metadata.annotations?.["kobun.dev/last-handled-configuration"]).toBeUndefined();
  const operatorPatches = kit.sandbox.stats.log.filter((r) => r.verb === "patch" && r.plural === "notes" && !r.query.includes("fieldManager=kobun-testing"));
  expect(operatorPatches.map((r) => r.path)).toEqual(["/apis/testing.kobun.dev/v1/namespaces/default/notes/n/status"]);
});
