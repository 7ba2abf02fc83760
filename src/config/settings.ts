// The type of the settings as the rest of kobun sees them: what the schema reads (schema.ts,
// where every default is written, and only there), deeply frozen, plus what resolveSettings
// derives (resolve.ts). A type derived from the schema, so a key is declared once.

import type { ResourceSettings } from "./resources.ts";
import type { SchemaValues } from "./schema.ts";

/** A type with every property and array readonly, all the way down (the settings are deeply frozen). */
export type DeepReadonly<T> = T extends readonly (infer E)[] ? readonly DeepReadonly<E>[]
  : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/** The namespace selection as resolved (namespaces.ts): not the file's keys, but what they mean. */
export interface NamespaceSettings {
  /** Positive names or globs; empty when cluster-wide. Never holds "!" entries. */
  readonly include: readonly string[];
  /** Names or globs never watched (the "!glob" entries end up here). */
  readonly exclude: readonly string[];
  /** Watch at cluster level (true also when only exclusions, or nothing, were given). */
  readonly allNamespaces: boolean;
  /** Neither namespaces nor all-namespaces were given: cluster-wide by default; warn about it. */
  readonly defaulted: boolean;
}

/**
 * The whole validated configuration, deeply frozen: every section and key of kobun.yaml as
 * SETTINGS_SCHEMA reads it (types, defaults and docs are there, and in kobun.example.yaml;
 * durations in seconds, null where the schema says what null means), plus what resolveSettings
 * derives: `peering.clusterwide` decided, `sharding.enabled` (replicas is not 1), the resolved
 * `namespaces`, and the per-resource `resources` entries.
 */
export type Settings = DeepReadonly<Omit<SchemaValues, "peering" | "sharding" | "namespaces"> & {
  peering: Omit<SchemaValues["peering"], "clusterwide"> & { clusterwide: boolean };
  sharding: SchemaValues["sharding"] & { enabled: boolean };
  namespaces: NamespaceSettings;
  resources: Record<string, ResourceSettings>;
}>;

export type PeeringSettings = Settings["peering"];
