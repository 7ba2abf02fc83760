// The object type the type tests register handlers for (a CRD's objects, written by hand).
import { resource, type ObjectMeta } from "kobun";

export interface KobunExample {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: { field?: string; size: number; items?: string[]; backup?: { schedule: string; keep?: number } };
  status?: { greeting?: string; count?: number };
}

export const Examples = resource<KobunExample>("kobunexamples.kobun.dev/v1");

/** Compiles only when A and B are the same type. */
export type Equal<A, B> = (<G>() => G extends A ? 1 : 2) extends (<G>() => G extends B ? 1 : 2) ? true : false;
export function assertType<T extends true>(): T | void {}
