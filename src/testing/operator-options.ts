// What the kit's methods take (operator.ts): a resource as named, the object `apply` sends, and
// the options of its waits.

import type { ResourceToken } from "../declaring/index.ts";

/** A resource as the kit names it: a typed token, or a selector string ("configmaps", "kobunexamples.kobun.dev/v1"). */
export type Named = ResourceToken<any> | string;

/**
 * What `apply` takes: the fields the test sets, every one optional at every depth (a server-side
 * apply names only what its manager owns, as client-go's apply configurations do: a Deployment's
 * `spec.replicas` alone), typed as the object type's own, so a whole `Job` is accepted too; apiVersion
 * and kind may be left out (the token names them); a missing `metadata.name` is refused when applying.
 */
export type Applied<T> = ApplyConfiguration<Omit<T, "apiVersion" | "kind">> & { apiVersion?: string; kind?: string };

/** T with every field optional, in lists' items too (untyped objects: any). */
type ApplyConfiguration<T> = 0 extends 1 & T ? any
  : T extends readonly (infer E)[] ? ApplyConfiguration<E>[]
  : T extends object ? { [K in keyof T]?: ApplyConfiguration<T[K]> }
  : T;

export interface WaitOptions {
  namespace?: string;
  /** In ms; default the kit's timeout. */
  timeout?: number;
}

export interface ApplyOptions {
  namespace?: string;
  /** "status": apply to the status subresource (as a controller writes status), the object's status only. */
  subresource?: "status";
}

export interface ConsistentlyOptions {
  /** The window, in ms of real time, from the call. */
  for: number;
  namespace?: string;
}
