// A custom resource's lists of `x-kubernetes-list-type: set` or `map` hold each item (a set) or each key
// (a map, by its `x-kubernetes-list-map-keys`) once, as the apiextensions-apiserver checks them after the schema's
// own checks (structurallisttype, over the whole object): a repeat is "Duplicate value" at the index where a value
// is seen the second time (a third is not said again), worded as Go's field errors show a value (a string quoted,
// a number bare, a map of the keys as JSON). On an update they are checked only when the stored object had none
// (the whole object's ratcheting: a list that broke the rule before its CRD said it stays writable).

import type { Cause } from "./schema-values.ts";

type Schema = Record<string, any>;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The repeats in `body`'s list-type sets and maps, or none when `old` (the stored object) had some. */
export function listTypeErrors(body: unknown, schema: Schema, old: unknown): Cause[] {
  const causes: Cause[] = [];
  walk(body, schema, "", causes);
  if (causes.length === 0 || old === undefined) return causes;
  const before: Cause[] = [];
  walk(old, schema, "", before);
  return before.length ? [] : causes;
}

function walk(value: unknown, s: Schema | undefined, path: string, out: Cause[]): void {
  if (!isObj(s)) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => walk(item, s.items as Schema | undefined, `${path}[${i}]`, out));
    repeats(value, s, path, out);
  } else if (isObj(value)) {
    for (const [key, v] of Object.entries(value)) {
      const child = isObj(s.properties) && isObj(s.properties[key]) ? s.properties[key] : s.additionalProperties;
      walk(v, child as Schema | undefined, path ? `${path}.${key}` : key, out);
    }
  }
}

/** JSON with an object's keys sorted: one text per value, whatever order its keys came in. */
function identity(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(identity).join(",")}]`;
  if (!isObj(value)) return JSON.stringify(value) ?? "null";
  return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${identity(value[key])}`).join(",")}}`;
}

/** The shown value of a field error: a string quoted, a number or boolean bare, a map of keys as JSON. */
const shown = (value: unknown): string => identity(value);

function repeats(list: unknown[], s: Schema, path: string, out: Cause[]): void {
  const type = s["x-kubernetes-list-type"];
  const keys = s["x-kubernetes-list-map-keys"];
  if (type !== "set" && !(type === "map" && Array.isArray(keys) && keys.length > 0)) return;
  const seen = new Map<string, number>();
  list.forEach((item, i) => {
    let value: unknown = item;
    if (type === "map") {
      if (item !== null && !isObj(item)) return; // not an object: the schema's type check says so
      const named: Record<string, unknown> = {};
      for (const key of keys as string[]) if (isObj(item) && key in item) named[key] = item[key];
      value = named; // a key left out is unspecified, apart from one given as null
    }
    const id = identity(value);
    const times = (seen.get(id) ?? 0) + 1;
    seen.set(id, times);
    if (times !== 2) return;
    out.push({ reason: "FieldValueDuplicate", message: `Duplicate value: ${shown(value)}`, field: `${path}[${i}]` });
  });
}
