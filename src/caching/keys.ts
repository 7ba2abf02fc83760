// How the store tells objects apart, and what it keeps of one.

import type { KubeObject } from "../kube/index.ts";
import type { Identity } from "./identity.ts";

/** What a shelf keeps of one object: its body, or its identity alone (identity.ts). */
export type Kept = KubeObject | Identity;

/** The identity of an object across relists: its uid (namespace/name if it has none). */
export function objectKey(object: KubeObject): string {
  const m = object.metadata ?? {};
  return m.uid ?? `${m.namespace ?? ""}/${m.name ?? ""}`;
}

/** How a reader names an object: its namespace (none for a cluster-scoped one) and name. */
export function nameKey(namespace: string | undefined | null, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** Objects known before a relist that the relist did not see: deleted in the meantime. */
export function vanished<T>(known: ReadonlyMap<string, T>, seen: { has(key: string): boolean }): T[] {
  const out: T[] = [];
  for (const [key, object] of known) if (!seen.has(key)) out.push(object);
  return out;
}
