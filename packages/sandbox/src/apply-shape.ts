// How server-side apply sees a kind's lists and maps: by the built-in kind's published schema, or
// a CRD version's openAPIV3Schema (its metadata typed as ObjectMeta, as kube-apiserver builds a
// custom resource's type), as structured-merge-diff does. A list is a map
// (`x-kubernetes-list-type: map`) keyed by all its `x-kubernetes-list-map-keys`, a key the item
// leaves out taking its schema default (a Service port `{port: 80}` is
// `k:{"port":80,"protocol":"TCP"}`, so 53/TCP and 53/UDP are two items), a set
// (`metadata.finalizers`: `v:` items), or atomic; a map may be atomic (a Service's selector).
// Strategic merge patch keys lists differently (by its patchMergeKey, `port` alone: strategic.ts).

import { builtinSchemaName, resolveSchema, schemaRef } from "./kube-schemas.ts";
import type { ResourceDef } from "./resources.ts";

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);

export interface ListMap { keys: string[]; defaults: Record<string, unknown> }

export interface ApplyShape {
  /** the list at `path` (field names from the object's root) as a map, or undefined */
  listMap(path: string[]): ListMap | undefined;
  /** whether the list at `path` is a set */
  isSet(path: string[]): boolean;
  /** whether the map at `path` is atomic */
  isAtomicMap(path: string[]): boolean;
}

const OBJECT_META = schemaRef("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
/** a custom resource without a schema (legacy preserveUnknownFields) still has typed metadata */
const UNTYPED_CUSTOM = { type: "object", properties: { metadata: OBJECT_META } };
const customRoots = new WeakMap<object, unknown>();

/**
 * the schema a kind's objects are walked by at `version`: the built-in's, the CRD version's (metadata as ObjectMeta),
 * or undefined
 */
export function schemaRootOf(def: ResourceDef, version: string): unknown {
  if (!def.crdName) {
    const name = builtinSchemaName(def.group, version, def.kind);
    return name ? schemaRef(name) : undefined;
  }
  const schema = def.schemas?.get(version);
  if (!schema) return UNTYPED_CUSTOM;
  let root = customRoots.get(schema);
  if (!root) {
    const properties = { ...(isObj(schema.properties) ? schema.properties : {}), metadata: OBJECT_META };
    customRoots.set(schema, (root = { ...schema, properties }));
  }
  return root;
}

/** the shape of `def`'s objects at `version`, or undefined (a kind without a schema: every list atomic) */
export function applyShape(def: ResourceDef, version: string): ApplyShape | undefined {
  const root = schemaRootOf(def, version);
  if (!root) return undefined;
  const cache = new Map<string, any>();
  const at = (path: string[]) => {
    const id = path.join(".");
    if (!cache.has(id)) cache.set(id, schemaAt(root, path));
    return cache.get(id);
  };
  return {
    listMap(path) {
      const s = at(path);
      if (s?.["x-kubernetes-list-type"] !== "map" || !Array.isArray(s["x-kubernetes-list-map-keys"])) return undefined;
      const items = resolveSchema(s.items);
      const keys = [...s["x-kubernetes-list-map-keys"]].sort() as string[];
      const defaults: Record<string, unknown> = {};
      for (const k of keys) {
        const d = resolveSchema(items?.properties?.[k])?.default;
        if (d !== undefined) defaults[k] = d;
      }
      return { keys, defaults };
    },
    isSet: (path) => at(path)?.["x-kubernetes-list-type"] === "set",
    isAtomicMap: (path) => at(path)?.["x-kubernetes-map-type"] === "atomic",
  };
}

function schemaAt(root: unknown, path: string[]): any {
  let s = resolveSchema(root);
  for (const name of path) {
    if (s?.type === "array") s = resolveSchema(s.items);
    s = isObj(s?.properties)
      ? resolveSchema(s.properties[name])
      : isObj(s?.additionalProperties) ? resolveSchema(s.additionalProperties) : undefined;
    if (!isObj(s)) return undefined;
  }
  return s;
}

/** an item's key in a list map (its key fields, defaulted; one it lacks is left out), or undefined when it has none */
export function itemKeyOf(item: unknown, map: ListMap): Record<string, unknown> | undefined {
  if (!isObj(item)) return undefined;
  const key: Record<string, unknown> = {};
  for (const k of map.keys) {
    const v = item[k] ?? map.defaults[k];
    if (v !== undefined) key[k] = v;
  }
  return Object.keys(key).length ? key : undefined;
}
