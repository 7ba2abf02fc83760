// What a write keeps once kube-apiserver has decoded it into its Go type and encoded it again: a field tagged
// omitempty that is empty is not written, so an empty map or list (`labels: {}`, `finalizers: []`, a ConfigMap's
// `data: {}`, a container's `env: []`) and a null are gone from what is stored and answered; a map's null value is
// decoded as "" (a label sent as null is stored as ""). A built-in kind is walked by its OpenAPI schema, where a
// field without omitempty is `required` and is left as sent; a custom resource is unstructured but for its
// metadata, decoded as ObjectMeta there too. Scalars other than null are left alone: an empty string or a zero
// that a pointer holds (a claim's `storageClassName: ""`) means something, and the schema cannot tell a pointer.
// kubectl diff meets this: its client-side patch carries `annotations: {}`, which a real server never shows.

import { builtinSchemaName, resolveSchema, schemaRef } from "./kube-schemas.ts";
import type { ResourceDef } from "./resources.ts";

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/** `body` (changed in place) as Go's decoding and omitempty encoding of its kind leave it */
export function goRoundTrip(def: ResourceDef, body: any): void {
  const name = def.crdName ? undefined : builtinSchemaName(def.group, def.versions[0]!, def.kind);
  if (name) prune(body, schemaRef(name));
  else if (isObj(body?.metadata)) prune(body.metadata, schemaRef(OBJECT_META));
  // ObjectMeta's strings are no pointers: an empty generateName is not written
  if (body?.metadata?.generateName === "") delete body.metadata.generateName;
}

const SCALARS = new Set(["string", "integer", "number", "boolean"]);

/**
 * a value Go leaves out of an optional field: an empty map or list, or a null where it decodes to one or to a
 * plain scalar's zero (a struct, a time, a quantity or an int-or-string may marshal its zero as something: left)
 */
function omitted(value: unknown, schema: any): boolean {
  const map = isObj(schema?.additionalProperties) && !isObj(schema?.properties);
  if (value === null) {
    return map || schema?.type === "array" || (SCALARS.has(schema?.type) && schema?.format !== "date-time");
  }
  if (Array.isArray(value)) return value.length === 0 && schema?.type === "array";
  return map && isObj(value) && Object.keys(value).length === 0;
}

function prune(value: unknown, schema: unknown, depth = 0): void {
  const s = resolveSchema(schema);
  if (!isObj(s) || s["x-kubernetes-preserve-unknown-fields"] === true || depth > 32) return;
  if (Array.isArray(value)) {
    if (s.items) for (const item of value) prune(item, s.items, depth + 1);
    return;
  }
  if (!isObj(value)) return;
  if (isObj(s.properties)) {
    const required: string[] = s.required ?? [];
    for (const [k, v] of Object.entries(value)) {
      const field = s.properties[k];
      if (field === undefined) continue;
      if (!required.includes(k) && omitted(v, resolveSchema(field))) delete value[k];
      else prune(v, field, depth + 1);
    }
  } else if (isObj(s.additionalProperties)) {
    const values = resolveSchema(s.additionalProperties);
    for (const [k, v] of Object.entries(value)) {
      if (v === null && values?.type === "string") value[k] = "";
      else prune(v, s.additionalProperties, depth + 1);
    }
  }
}
