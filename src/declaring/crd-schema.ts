// TypeBox's JSON Schema as a CRD's structural schema: what kube-apiserver's CRD validation
// (apiextensions-apiserver, pkg/apis/apiextensions/validation and pkg/apiserver/schema) accepts.
// A construct with a CRD form is rewritten to it (a Record becomes additionalProperties, a
// union with Null becomes nullable, literals become an enum); one without is a RegistrationError
// naming the field, so that a CRD the real server would refuse is never written.

import { RegistrationError } from "./registration.ts";

type Node = Record<string, any>;

/**
 * What a CRD's schema node may say (apiextensions/v1 JSONSchemaProps, less what the server
 * refuses). Any other key TypeBox or an author writes ($id, $comment, examples, readOnly,
 * contentEncoding...) is an annotation the server would drop with a warning: dropped here.
 */
const CRD_FIELDS = new Set([
  "description", "type", "format", "title", "default", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
  "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf", "enum", "maxProperties",
  "minProperties", "required", "items", "allOf", "oneOf", "anyOf", "properties", "additionalProperties",
  "patternProperties", "externalDocs", "example", "nullable", "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys",
  "x-kubernetes-list-type", "x-kubernetes-map-type", "x-kubernetes-validations",
]);
/** JSON Schema keywords that constrain values in ways a CRD cannot say. */
const REFUSED = [
  "dependencies", "dependentSchemas", "dependentRequired", "definitions", "if", "then", "else", "propertyNames",
  "contains", "minContains", "maxContains", "prefixItems", "unevaluatedProperties", "unevaluatedItems",
];
/** The types a CRD's schema knows (openapiV3Types upstream). */
const TYPES = new Set(["array", "boolean", "integer", "number", "object", "string"]);
const SCALARS = new Set(["boolean", "integer", "number", "string"]);
/** A string-keyed Type.Record's key pattern. */
const ANY_KEY = "^.*$";

/** The structural form of `schema` at `path` (like "spec"); throws a RegistrationError saying `where` and the field. */
export function structuralSchema(schema: unknown, path: string, where: string): unknown {
  return translate(schema, path, (field, why) => new RegistrationError(`${where}: ${field}: ${why}`));
}

type Refuse = (field: string, why: string) => RegistrationError;

// long: one rule per JSON Schema construct, in the order the constructs nest; split, they would pass the same state.
function translate(schema: unknown, path: string, refuse: Refuse): Node {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw refuse(path, "a schema must be a TypeBox schema object");
  }
  const node: Node = { ...schema };
  if ("$ref" in node) {
    throw refuse(path, "Type.Ref / Type.Cyclic has no CRD form (a CRD schema cannot refer to another); " +
      "write it in place");
  }
  if ("not" in node) throw refuse(path, "Type.Not / Type.Never has no CRD form");
  if ("additionalItems" in node || Array.isArray(node.items)) {
    throw refuse(path, "Type.Tuple has no CRD form (an array has one item schema); use Type.Array");
  }
  for (const key of REFUSED) {
    if (key in node) throw refuse(path, `JSON Schema "${key}" has no CRD form`);
  }
  if ("const" in node) node.enum = [node.const];
  for (const key of Object.keys(node)) if (!CRD_FIELDS.has(key)) delete node[key];
  exclusiveBounds(node);
  if (node.anyOf !== undefined || node.oneOf !== undefined) return union(node, path, refuse);
  if (node.allOf !== undefined) return intersection(node, path, refuse);
  if (Array.isArray(node.enum)) Object.assign(node, enumForm(node.enum, node.type, path, refuse));
  if (node.type === undefined) {
    // Type.Unknown / Type.Any: any value, kept as written (a structural schema must otherwise name a type).
    if (Object.keys(node).length === 0) return { "x-kubernetes-preserve-unknown-fields": true };
    throw refuse(path, "a schema without a type has no CRD form (except Type.Unknown / Type.Any)");
  }
  if (typeof node.type !== "string" || !TYPES.has(node.type)) {
    throw refuse(path, `type ${JSON.stringify(node.type)} has no CRD form (${[...TYPES].join(", ")}; ` +
      "a nullable field is Type.Union([T, Type.Null()]))");
  }
  if (node.type === "object") objectForm(node, path, refuse);
  if (node.type === "array") arrayForm(node, path, refuse);
  return node;
}

function objectForm(node: Node, path: string, refuse: Refuse): void {
  const properties = node.properties && Object.keys(node.properties).length ? node.properties : undefined;
  if (node.patternProperties !== undefined) {
    const patterns = Object.entries(node.patternProperties as Node);
    const [only] = patterns;
    if (properties || node.additionalProperties !== undefined || patterns.length !== 1 || only?.[0] !== ANY_KEY) {
      throw refuse(path, "a CRD map has string keys of any form and no fixed properties: " +
        "use Type.Record(Type.String(), T) on its own (a map's keys cannot be constrained)");
    }
    delete node.patternProperties;
    node.additionalProperties = translate(only![1], `${path}.*`, refuse);
  } else if (node.additionalProperties === false) {
    // the server refuses false beside properties; unknown fields are pruned all the same
    delete node.additionalProperties;
  } else if (node.additionalProperties === true) {
    delete node.additionalProperties;
    node["x-kubernetes-preserve-unknown-fields"] = true;
  } else if (node.additionalProperties !== undefined) {
    if (properties) throw refuse(path, "an object has either properties or additionalProperties in a CRD, not both");
    node.additionalProperties = translate(node.additionalProperties, `${path}.*`, refuse);
  }
  if (node.properties) {
    node.properties = Object.fromEntries(Object.entries(node.properties as Node)
      .map(([key, value]) => [key, translate(value, `${path}.${key}`, refuse)]));
  }
}

function arrayForm(node: Node, path: string, refuse: Refuse): void {
  if (node.items === undefined) throw refuse(path, "an array needs an item schema (Type.Array(T))");
  node.items = translate(node.items, `${path}[*]`, refuse);
  if (node.uniqueItems === true) {
    // the server refuses uniqueItems (quadratic); a set of scalars is its way of saying it
    if (!SCALARS.has(node.items.type)) {
      throw refuse(path, "uniqueItems has a CRD form only for items of a scalar type (x-kubernetes-list-type: set)");
    }
    node["x-kubernetes-list-type"] = "set";
  }
  delete node.uniqueItems;
  if (node["x-kubernetes-list-type"] === "map") listMapKeysCheck(node, path, refuse);
}

/**
 * A list-type map's keys, as the API server holds a CRD to them: an object's scalar properties, each required or
 * defaulted (an item without its key could not be told apart from another).
 */
function listMapKeysCheck(node: Node, path: string, refuse: Refuse): void {
  const keys = node["x-kubernetes-list-map-keys"];
  const items = node.items as Node;
  if (!Array.isArray(keys) || keys.length === 0) {
    throw refuse(path, "x-kubernetes-list-type: map needs x-kubernetes-list-map-keys, the item fields that key it");
  }
  if (items.type !== "object") throw refuse(path, "x-kubernetes-list-type: map needs items of type object");
  for (const key of keys as string[]) {
    const field = (items.properties as Node | undefined)?.[key] as Node | undefined;
    if (!field || !SCALARS.has(field.type)) {
      throw refuse(`${path}[*].${key}`, "a key of x-kubernetes-list-map-keys must be a scalar property of the items");
    }
    const required = Array.isArray(items.required) && items.required.includes(key);
    if (!required && field.default === undefined) {
      throw refuse(`${path}[*].${key}`, "is in x-kubernetes-list-map-keys, so it must have a default or be a " +
        "required property");
    }
  }
}

/** An enum's type, from its values when the schema names none (Type.Enum); a null among them makes it nullable. */
function enumForm(values: unknown[], type: unknown, path: string, refuse: Refuse): Node {
  const present = values.filter((v) => v !== null);
  const kinds = new Set(present.map((v) => (Number.isInteger(v) ? "integer" : typeof v)));
  if (kinds.has("integer") && kinds.has("number")) kinds.delete("integer");
  const inferred = kinds.size === 1 ? [...kinds][0] : undefined;
  const chosen = type ?? inferred;
  if (typeof chosen !== "string" || !SCALARS.has(chosen) || (inferred !== undefined && inferred !== chosen
    && !(chosen === "number" && inferred === "integer"))) {
    throw refuse(path, "an enum's values must all be of one scalar type (string, integer, number or boolean)");
  }
  if (present.length === values.length) return { type: chosen, enum: values };
  // The server checks a null against an enum too, and no enum lets it through (not even one listing
  // null): a nullable enum of strings is a pattern instead, which a null skips.
  if (chosen !== "string") throw refuse(path, "a nullable enum has a CRD form only for strings");
  const escaped = present.map((v) => String(v).replace(/[\\^$.*+?()[\]{}|]/g, "\\$&"));
  return { type: chosen, nullable: true, pattern: `^(${escaped.join("|")})$` };
}

/**
 * Type.Union: T | Null is T nullable; literals of one type are an enum; Integer | String is
 * int-or-string; objects are one object with every branch's properties, required where all
 * branches require them. Other mixes of types have no structural form.
 */
function union(node: Node, path: string, refuse: Refuse): Node {
  const { anyOf, oneOf, ...outer } = node;
  const branches: Node[] = anyOf ?? oneOf;
  if (!Array.isArray(branches) || branches.length === 0) throw refuse(path, "a union needs at least one member");
  const present = branches.filter((b) => b?.type !== "null");
  const nullable = present.length < branches.length ? { nullable: true } : {};
  if (present.length === 0) throw refuse(path, "Type.Null alone has no CRD form");
  let merged: Node;
  if (present.length === 1) {
    merged = translate(present[0]!, path, refuse);
    if (Array.isArray(merged.enum) && present.length < branches.length) {
      // A single literal, a literal union or Type.Enum, made nullable: the server checks a null against
      // the enum and refuses it, so it takes the form the flat nullable enum has (strings: a pattern).
      const { enum: values, type, ...rest } = merged;
      merged = { ...rest, ...enumForm([...values, null], type, path, refuse) };
    }
  } else if (present.every((b) => "const" in b)) {
    const values = [...present.map((b) => b.const), ...(present.length < branches.length ? [null] : [])];
    merged = { ...enumForm(values, present[0]!.type, path, refuse) };
  } else if (isIntOrString(present)) {
    merged = { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] };
  } else if (present.every((b) => b?.type === "object" && b.patternProperties === undefined)) {
    merged = objects(present.map((b) => translate(b, path, refuse)), "some", path, refuse);
  } else {
    const types = present.map((b) => b?.type ?? "?").join(" | ");
    throw refuse(path, `a union of ${types} has no CRD form (a CRD field has one type: a union may be T | Null, ` +
      "literals of one type, Integer | String, or objects)");
  }
  return { ...outer, ...merged, ...nullable };
}

/** Integer | String, bare (what a CRD calls x-kubernetes-int-or-string) */
function isIntOrString(members: Node[]): boolean {
  const types = members.map((m) => (Object.keys(m).length === 1 ? m.type : undefined)).sort();
  return types.length === 2 && types[0] === "integer" && types[1] === "string";
}

/** Type.Intersect of objects: one object with every member's properties and required fields. */
function intersection(node: Node, path: string, refuse: Refuse): Node {
  const { allOf, ...outer } = node;
  const members: Node[] = (allOf as Node[]).map((m) => translate(m, path, refuse));
  if (!members.every((m) => m.type === "object" && m.additionalProperties === undefined)) {
    throw refuse(path, "Type.Intersect has a CRD form only for objects with properties");
  }
  return { ...outer, ...objects(members, "all", path, refuse) };
}

/**
 * JSON Schema's numeric exclusiveMinimum/Maximum (what TypeBox writes) as OpenAPI v3.0's, which a
 * CRD decodes: a boolean beside minimum/maximum, the stricter bound kept.
 */
function exclusiveBounds(node: Node): void {
  const pairs = [["exclusiveMinimum", "minimum", 1], ["exclusiveMaximum", "maximum", -1]] as const;
  for (const [exclusive, bound, stricter] of pairs) {
    const limit = node[exclusive];
    if (typeof limit !== "number") continue;
    const inclusive = node[bound];
    if (typeof inclusive !== "number" || (limit - inclusive) * stricter >= 0) {
      node[bound] = limit;
      node[exclusive] = true;
    } else {
      delete node[exclusive];
    }
  }
}

/** Objects as one: their properties (the same name must have the same schema), required by `all` or `some` of them. */
function objects(members: Node[], requiredBy: "all" | "some", path: string, refuse: Refuse): Node {
  const properties: Node = {};
  for (const m of members) {
    for (const [key, value] of Object.entries((m.properties ?? {}) as Node)) {
      if (key in properties && JSON.stringify(properties[key]) !== JSON.stringify(value)) {
        throw refuse(`${path}.${key}`, "the members of a union or intersection give this property different schemas");
      }
      properties[key] = value;
    }
  }
  const lists = members.map((m) => (m.required ?? []) as string[]);
  const required = requiredBy === "all"
    ? [...new Set(lists.flat())]
    : (lists[0] ?? []).filter((key) => lists.every((list) => list.includes(key)));
  const preserve = members.some((m) => m["x-kubernetes-preserve-unknown-fields"]);
  return {
    type: "object", properties, ...(required.length ? { required } : {}),
    ...(preserve ? { "x-kubernetes-preserve-unknown-fields": true } : {}),
  };
}
