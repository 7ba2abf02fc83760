// What the simulation-blackbox tests share: the resource their small operators manage (a Gadget,
// with the fields each operator reads), and a refused simulation's message. The ConfigMap child and
// the SimulationFailure a buggy operator must end with are the corpus's (test/simulation/widgets.ts).
// Everything the tests call is the public API (`kobun`, `kobun/testing`), as an author's tests would.

import { defineResource } from "kobun";
import { SimulationFailure } from "kobun/testing";
import Type from "typebox";

export { configMap, failureOf } from "../simulation/widgets.ts";

export const Gadgets = defineResource({
  group: "blackbox.simulation.kobun.dev", kind: "Gadget", plural: "gadgets",
  schema: {
    spec: Type.Object({ size: Type.Optional(Type.Integer()), phase: Type.Optional(Type.String()) }),
    status: Type.Object({
      phase: Type.Optional(Type.String()), note: Type.Optional(Type.String()), ready: Type.Optional(Type.Boolean()),
    }, { additionalProperties: true }),
  },
});

/** the rejection's message of a simulation that must refuse its options outright, without running */
export async function refusal(simulation: Promise<unknown>): Promise<string> {
  const outcome = await simulation.then(() => "resolved", (error: unknown) => error);
  if (outcome instanceof SimulationFailure) throw new Error(`ran and failed instead of refusing:\n${outcome.report}`);
  if (!(outcome instanceof Error)) throw new Error(`should have been refused, and ${String(outcome)}`);
  return outcome.message;
}
