// The object type the type tests register handlers for (a CRD's objects, written by hand).
import Type from "typebox";
import { defineResource, resource, type ObjectMeta } from "kobun";

export interface KobunExample {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: { field?: string; size: number; items?: string[]; backup?: { schedule: string; keep?: number } };
  status?: { greeting?: string; count?: number };
}

export const Examples = resource<KobunExample>("kobunexamples.kobun.dev/v1");

/** The same kind of resource, schema first: its type comes from the TypeBox schema. */
export const Defined = defineResource({
  group: "kobun.dev",
  kind: "KobunDefined",
  plural: "kobundefineds",
  schema: {
    spec: Type.Object({ size: Type.Integer(), mode: Type.Union([Type.Literal("full"), Type.Literal("delta")]), note: Type.Optional(Type.String()) }),
    status: Type.Object({ phase: Type.Optional(Type.String()) }),
  },
});

/** Compiles only when A and B are the same type. */
export type Equal<A, B> = (<G>() => G extends A ? 1 : 2) extends (<G>() => G extends B ? 1 : 2) ? true : false;
export function assertType<T extends true>(): T | void {}
