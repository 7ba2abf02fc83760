// Structural-schema handling for custom resources, as the apiextensions-apiserver does it on
// every write (create, update, patch; main object and /status): null values of non-nullable
// properties without a default are dropped, fields the version's `openAPIV3Schema` does not
// declare are pruned (unless `x-kubernetes-preserve-unknown-fields` applies at that level;
// `apiVersion`, `kind` and `metadata` at the root and in embedded resources are never pruned),
// schema `default`s fill absent fields (and non-nullable nulls) at every level — in array items
// and map values too, and inside a default just filled in — then every value is checked against
// its schema `type` (`nullable`, `x-kubernetes-int-or-string`) → 422 Invalid with
// `FieldValueTypeInvalid` causes, and against its value constraints (schema-values.ts: required,
// enum, bounds, lengths, patterns, counts), and list-type sets' and maps' repeats (list-types.ts).
// Unchanged values of an update are not re-validated (validation ratcheting, GA since 1.33).
// Not validated: formats but date-time (schema-values.ts), and CEL rules.

import { deepEqual } from "./patch.ts";
import { listTypeErrors } from "./list-types.ts";
import { objectCauses, requiredCauses, valueCauses, type Cause } from "./schema-values.ts";
import { ApiStatusError, type StatusDetails } from "./status.ts";
import { addWarning } from "./warnings.ts";

type Schema = Record<string, any>;
export type { Cause };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const ROOT_KEEP = new Set(["apiVersion", "kind", "metadata"]);

/** the JSON type of a value, named as kube-openapi names it in messages */
function typeOf(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "string") return "string";
  return "object";
}

/** the schema for a property of an object schema, or undefined when it declares none */
function childSchema(s: Schema, key: string): Schema | undefined {
  if (isObj(s.properties) && isObj(s.properties[key])) return s.properties[key] as Schema;
  if (isObj(s.additionalProperties)) return s.additionalProperties as Schema;
  return undefined;
}

/** prune in place: drop undeclared fields and non-nullable nulls; `root` keeps apiVersion/kind/metadata */
export function prune(value: unknown, s: Schema | undefined, root = false, pruned?: string[], path = ""): void {
  if (!s || s["x-kubernetes-int-or-string"]) return;
  if (Array.isArray(value)) {
    if (isObj(s.items)) value.forEach((item, i) => prune(item, s.items as Schema, false, pruned, `${path}[${i}]`));
    return;
  }
  if (!isObj(value)) return;
  const keep = root || s["x-kubernetes-embedded-resource"] === true;
  const preserve = s["x-kubernetes-preserve-unknown-fields"] === true;
  const anyProps = s.additionalProperties === true;
  for (const key of Object.keys(value)) {
    if (keep && ROOT_KEEP.has(key)) continue;
    const child = childSchema(s, key);
    if (!child) {
      if (!preserve && !anyProps) {
        delete value[key];
        pruned?.push(path ? `${path}.${key}` : key);
      }
      continue;
    }
    if (value[key] === null && child.nullable !== true && child.default === undefined) {
      delete value[key];
      continue;
    }
    prune(value[key], child, false, pruned, path ? `${path}.${key}` : key);
  }
}

/**
 * Fill in place the `default` of every property the value lacks (or holds as null while not
 * nullable), then descend into properties, map values (additionalProperties) and array items:
 * the apiextensions-apiserver's structural defaulting.
 */
export function fillDefaults(value: unknown, s: Schema | undefined): void {
  if (!s) return;
  if (Array.isArray(value)) {
    if (isObj(s.items)) for (const item of value) fillDefaults(item, s.items as Schema);
    return;
  }
  if (!isObj(value)) return;
  const props = isObj(s.properties) ? (s.properties as Record<string, Schema>) : undefined;
  if (props) {
    for (const key in props) {
      const prop = props[key]!;
      if (!isObj(prop) || prop.default === undefined) continue;
      if (wantsDefault(value, key, prop)) value[key] = structuredClone(prop.default);
    }
  }
  for (const key in value) fillDefaults(value[key], memberSchema(s, props, key));
}

/** A property is defaulted when absent, or null while its schema is not nullable. */
function wantsDefault(value: Record<string, unknown>, key: string, prop: Schema): boolean {
  return !(key in value) || (value[key] === null && prop.nullable !== true);
}

/** The schema of an object's member: its declared property's, or the map values' (additionalProperties). */
function memberSchema(s: Schema, props: Record<string, Schema> | undefined, key: string): Schema | undefined {
  return props?.[key] ?? (isObj(s.additionalProperties) ? (s.additionalProperties as Schema) : undefined);
}

/** Would fillDefaults add anything to `value`? */
function lacksDefaults(value: unknown, s: Schema | undefined): boolean {
  if (!s) return false;
  if (Array.isArray(value)) return isObj(s.items) && value.some((item) => lacksDefaults(item, s.items as Schema));
  if (!isObj(value)) return false;
  const props = isObj(s.properties) ? (s.properties as Record<string, Schema>) : undefined;
  for (const key in props ?? {}) {
    const prop = props![key]!;
    if (isObj(prop) && prop.default !== undefined && wantsDefault(value, key, prop)) return true;
  }
  for (const key in value) if (lacksDefaults(value[key], memberSchema(s, props, key))) return true;
  return false;
}

const schemaHasDefaults = new WeakMap<object, boolean>();
/** Does the schema declare a `default` anywhere (computed once per schema)? */
function hasDefaults(schema: Schema): boolean {
  let known = schemaHasDefaults.get(schema);
  if (known === undefined) schemaHasDefaults.set(schema, (known = JSON.stringify(schema).includes('"default":')));
  return known;
}

/**
 * The object as read back: kube-apiserver defaults what it reads from etcd too (by the storage
 * version's schema, before converting it to the version asked for), so an object
 * stored before its CRD gained a default shows it (unstored until the next write). Untouched,
 * and not copied, when nothing is missing: every write already filled the defaults in.
 */
export function withReadDefaults(body: any, schema: Schema | undefined): any {
  if (!isObj(schema) || !hasDefaults(schema) || !lacksDefaults(body, schema)) return body;
  const copy = structuredClone(body);
  fillDefaults(copy, schema);
  return copy;
}

function typeMatches(v: unknown, s: Schema): boolean | undefined {
  if (v === null) return s.nullable === true;
  if (s["x-kubernetes-int-or-string"]) return (typeof v === "number" && Number.isInteger(v)) || typeof v === "string";
  switch (s.type) {
    case "string": return typeof v === "string";
    case "integer": return typeof v === "number" && Number.isInteger(v);
    case "number": return typeof v === "number";
    case "boolean": return typeof v === "boolean";
    case "object": return isObj(v);
    case "array": return Array.isArray(v);
    default: return undefined;
  }
}

/** type and value errors of `value` against `s` at `path`; `old` is the previous value at that path (ratcheting) */
export function validateSchema(
  value: unknown, s: Schema | undefined, path: string, old: unknown, out: Cause[], root = false,
): void {
  if (!s) return;
  if (old !== undefined && deepEqual(value, old)) return;
  const ok = typeMatches(value, s);
  if (ok === false) {
    const want = s["x-kubernetes-int-or-string"] ? "integer,string" : String(s.type);
    const got = typeOf(value);
    const where = path || "<root>";
    const message = `Invalid value: "${got}": ${where} in body must be of type ${want}: "${got}"`;
    out.push({ reason: "FieldValueTypeInvalid", message, field: where });
    return;
  }
  if (Array.isArray(value)) {
    if (isObj(s.items)) {
      value.forEach((item, i) => validateSchema(item, s.items as Schema, `${path}[${i}]`, undefined, out));
    }
    valueCauses(value, s, path, out);
    return;
  }
  if (!isObj(value) || s["x-kubernetes-int-or-string"]) {
    valueCauses(value, s, path, out);
    return;
  }
  objectCauses(value, s, path, out);
  const keep = root || s["x-kubernetes-embedded-resource"] === true;
  const oldObj = isObj(old) ? old : undefined;
  for (const [key, v] of Object.entries(value)) {
    if (keep && ROOT_KEEP.has(key)) continue;
    validateSchema(v, childSchema(s, key), path ? `${path}.${key}` : key, oldObj?.[key], out);
  }
  requiredCauses(value, s, path, out);
}

/** 422 Invalid for a list of field causes, worded as kube-apiserver words it */
export function invalidError(group: string, kind: string, name: string, causes: Cause[]): ApiStatusError {
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  // ErrorList.ToAggregate: a message said twice is said once
  const lines = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))];
  const message = `${qualifiedKind} "${name}" is invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(", ")}]`}`;
  // a core kind's Status has no group (Go's omitempty), as the real server answers
  const details: StatusDetails = { name, ...(group ? { group } : {}), kind, causes };
  return new ApiStatusError(422, "Invalid", message, details);
}

/** 400 for fields the schema does not declare, under fieldValidation=Strict, as the real server's strict decoding */
export function strictDecodingError(kind: string, version: string | undefined, fields: string[]): ApiStatusError {
  const unknown = fields.map((f) => `unknown field "${f}"`).join(", ");
  const message = `${kind} in version "${version}" cannot be handled as a ${kind}: strict decoding error: ${unknown}`;
  return new ApiStatusError(400, "BadRequest", message);
}

/**
 * How a custom resource's unknown fields are answered (fieldValidation=Strict refused them before: validation.ts):
 * dropped silently (Ignore), else dropped with a warning each; `unknown` are those its metadata dropped.
 */
export interface FieldValidation { quiet: boolean; unknown: string[] }

/**
 * Prune `body` (in place) by the version's schema, fill its defaults and check its types; throws 422 Invalid.
 * `old` is the stored object on update (for ratcheting). No schema: nothing to do.
 */
export function applySchema(
  schema: Schema | undefined, group: string, kind: string, body: any, old?: any,
  validation: FieldValidation = { quiet: true, unknown: [] },
): void {
  const pruned: string[] = [];
  if (isObj(schema)) prune(body, schema, true, pruned);
  // the pruned paths sorted, after the metadata's, as the real server's pruning step says them
  const unknown = [...validation.unknown, ...pruned.sort()];
  if (!validation.quiet) for (const field of unknown) addWarning(`unknown field "${field}"`);
  if (!isObj(schema)) return;
  fillDefaults(body, schema);
  const causes: Cause[] = [];
  validateSchema(body, schema, "", old, causes, true);
  causes.push(...listTypeErrors(body, schema, old));
  if (causes.length) throw invalidError(group, kind, body?.metadata?.name ?? "", causes);
}
