// A custom resource's lists of `x-kubernetes-list-type: set` or `map` hold each item (a set) or each key
// (a map, by its `x-kubernetes-list-map-keys`) once, as the apiextensions-apiserver checks them after the schema's
// own checks (structurallisttype): a repeat is "Duplicate value" at its index, worded as Go's field errors show
// a value (a string quoted, a number bare, a map of the keys as JSON).

import { deepEqual } from "./patch.ts";
import type { Cause } from "./schema-values.ts";

type Schema = Record<string, any>;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The shown value of a field error: a string quoted, a number or boolean bare, a map of keys as Go's json.Marshal
 * writes it (keys sorted, nothing between).
 */
function shown(value: unknown): string {
  if (!isObj(value)) return JSON.stringify(value) ?? "null";
  return JSON.stringify(Object.fromEntries(Object.keys(value).sort().map((key) => [key, value[key]])));
}

const duplicate = (field: string, value: unknown): Cause =>
  ({ reason: "FieldValueDuplicate", message: `Duplicate value: ${shown(value)}`, field });

/** The duplicate items of a list-type set or map `list` at `path` (nothing for other lists). */
export function listTypeCauses(list: unknown[], s: Schema, path: string, out: Cause[]): void {
  const type = s["x-kubernetes-list-type"];
  if (type === "set") return setCauses(list, path, out);
  const keys = s["x-kubernetes-list-map-keys"];
  if (type === "map" && Array.isArray(keys) && keys.length > 0) mapCauses(list, keys as string[], path, out);
}

function setCauses(list: unknown[], path: string, out: Cause[]): void {
  list.forEach((item, i) => {
    if (list.slice(0, i).some((earlier) => deepEqual(earlier, item))) out.push(duplicate(`${path}[${i}]`, item));
  });
}

function mapCauses(list: unknown[], keys: string[], path: string, out: Cause[]): void {
  const seen = new Set<string>();
  list.forEach((item, i) => {
    if (!isObj(item)) return; // not an object: the schema's type check says so
    const named: Record<string, unknown> = {};
    for (const key of keys) if (key in item) named[key] = item[key];
    const identity = JSON.stringify(keys.map((key) => (key in item ? item[key] : null)));
    if (seen.has(identity)) out.push(duplicate(`${path}[${i}]`, named));
    else seen.add(identity);
  });
}
