// Must typecheck: a resource with a schema per version; the token is the storage version's,
// `versions.<name>` each typed by its own schema.
import { defineResource, Registry } from "kobun";
import Type from "typebox";

export const Gadgets = defineResource({
  group: "example.com", kind: "Gadget", plural: "gadgets",
  versions: {
    v1: { storage: true, schema: { spec: Type.Object({ replicas: Type.Integer(), mode: Type.Union([Type.Literal("on"), Type.Literal("off")]) }), status: Type.Object({ ready: Type.Optional(Type.Boolean()) }) } },
    v1beta1: { deprecated: "example.com/v1beta1 Gadget is deprecated; use v1", schema: { spec: Type.Object({ size: Type.Integer() }) } },
  },
});

const { on } = new Registry();
on.create(Gadgets, ({ spec, patch }) => {
  const replicas: number = spec.replicas;          // the storage version's spec
  const mode: "on" | "off" = spec.mode;
  patch.status.ready = replicas > 0 && mode === "on";
});
on.create(Gadgets.versions.v1beta1, ({ spec }) => {
  const size: number = spec.size;                  // v1beta1's own spec
  return { size };
});
on.update(Gadgets.versions.v1, ({ spec }) => ({ replicas: spec.replicas }));
