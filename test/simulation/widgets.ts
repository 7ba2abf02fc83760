// The resource the corpus's small operators manage: a Widget, with a free-form spec and status
// (each operator reads the fields it needs), and the helpers their tests share.

import { defineResource, type Registry } from "kobun";
import { SimulationFailure } from "kobun/testing";
import Type from "typebox";

export const Widgets = defineResource({
  group: "simulation.kobun.dev", kind: "Widget", plural: "widgets",
  schema: {
    spec: Type.Object({
      replicas: Type.Optional(Type.Integer()),
      phase: Type.Optional(Type.String()),
    }),
    status: Type.Object({
      phase: Type.Optional(Type.String()),
      made: Type.Optional(Type.Array(Type.String())),
      reported: Type.Optional(Type.Array(Type.String())),
      note: Type.Optional(Type.String()),
      ready: Type.Optional(Type.Boolean()),
      store: Type.Optional(Type.String()),
    }, { additionalProperties: true }),
  },
});

/** a ConfigMap child of a Widget, named by the operator */
export function configMap(name: string, data: Record<string, string> = {}) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data };
}

/** an index `childrenByOwner` of the ConfigMaps, by their first owner's uid: what a lagging watch leaves stale */
export function indexChildrenByOwner(registry: Registry): void {
  registry.on.index("configmaps", ({ name, body }) => {
    const owner = (body.metadata as { ownerReferences?: { uid: string }[] }).ownerReferences?.[0];
    return owner ? { [owner.uid]: name } : undefined;
  }, { id: "childrenByOwner" });
}

/** the SimulationFailure a simulation of a buggy operator must end with */
export async function failureOf(simulation: Promise<unknown>): Promise<SimulationFailure> {
  const outcome = await simulation.catch((error: unknown) => error);
  if (outcome instanceof SimulationFailure) return outcome;
  throw new Error(`the simulation should have failed, and ended with ${Bun.inspect(outcome).slice(0, 2000)}`);
}
