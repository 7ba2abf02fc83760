// What kube-apiserver refuses in a CRD's openAPIV3Schema, worded as it words it: the OpenAPI
// checks of apiextensions-apiserver's pkg/apis/apiextensions/validation (patternProperties, $ref,
// id, definitions, dependencies, additionalItems, tuple items, type null, uniqueItems,
// properties beside additionalProperties, preserve-unknown-fields false, a list-type map's key
// neither required nor defaulted) and the structural rules of pkg/apiserver/schema/validation.go
// (a type on every field, none inside anyOf/allOf/oneOf/not, items on every array). Upstream lists
// a structural schema's errors sorted, then the OpenAPI ones in walk order; properties are walked in
// key order here (a Go map's there).

type Node = Record<string, any>;

/** One field error: the reason for the Status cause, the path, and the text after the path. */
export interface SchemaError { reason: string; field: string; body: string }

const TYPES = ["array", "boolean", "integer", "number", "object", "string"];
const forbidden = (field: string, detail: string): SchemaError =>
  ({ reason: "FieldValueForbidden", field, body: `Forbidden: ${detail}` });
const required = (field: string, detail: string): SchemaError =>
  ({ reason: "FieldValueRequired", field, body: `Required value: ${detail}` });
const invalid = (field: string, value: unknown, detail: string): SchemaError =>
  ({ reason: "FieldValueInvalid", field, body: `Invalid value: ${JSON.stringify(value)}: ${detail}` });
const isObj = (v: unknown): v is Node => typeof v === "object" && v !== null && !Array.isArray(v);
const sortedEntries = (v: unknown): [string, any][] =>
  (isObj(v) ? Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)) : []);
const listed = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** the errors `check` finds in each child schema of a map (properties, definitions), under `path[key]` */
const keyed = (v: unknown, path: string, check: (child: unknown, path: string) => SchemaError[]): SchemaError[] =>
  sortedEntries(v).flatMap(([key, child]) => check(child, `${path}[${key}]`));
const indexed = (v: unknown, path: string, check: (child: unknown, path: string) => SchemaError[]): SchemaError[] =>
  listed(v).flatMap((child, i) => check(child, `${path}[${i}]`));

/** The schema errors of a CRD spec's versions, under the path the real server reports them at. */
export function crdSchemaErrors(spec: Node): SchemaError[] {
  const versions: Node[] = Array.isArray(spec.versions) ? spec.versions : [];
  const schemas = versions.map((v) => v?.schema?.openAPIV3Schema);
  // The server converts a v1 CRD whose versions all carry one schema to the top-level form and reports it there.
  const same = schemas.length > 0 && schemas.every((s) => isObj(s) && canonical(s) === canonical(schemas[0]));
  if (same) return schemaErrors(schemas[0], "spec.validation.openAPIV3Schema");
  return schemas.flatMap((s, i) => (isObj(s) ? schemaErrors(s, `spec.versions[${i}].schema.openAPIV3Schema`) : []));
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isObj(value)) {
    return `{${sortedEntries(value).map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function schemaErrors(schema: Node, path: string): SchemaError[] {
  const structural = convertible(schema) ? structuralErrors(schema, "root", path) : [];
  const text = (e: SchemaError) => `${e.field}: ${e.body}`;
  structural.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
  return [...structural, ...openAPIErrors(schema, path)];
}

/** whether upstream's NewStructural takes the schema (else its structural checks are not reached) */
function convertible(node: unknown): boolean {
  if (!isObj(node)) return true;
  for (const key of ["id", "$schema", "$ref", "patternProperties", "dependencies", "additionalItems", "definitions"]) {
    if (node[key] !== undefined) return false;
  }
  if (Array.isArray(node.items) || node["x-kubernetes-preserve-unknown-fields"] === false) return false;
  const children = [node.items, node.not, ...Object.values(isObj(node.properties) ? node.properties : {}),
    ...(isObj(node.additionalProperties) ? [node.additionalProperties] : []),
    ...["anyOf", "allOf", "oneOf"].flatMap((k) => (Array.isArray(node[k]) ? node[k] : []))];
  return children.every(convertible);
}

/** the OpenAPI checks of ValidateCustomResourceDefinitionOpenAPISchema, in its order */
// long: one check per keyword, in upstream's order, which decides the order of the errors.
function openAPIErrors(node: unknown, path: string): SchemaError[] {
  if (!isObj(node)) return [];
  const out: SchemaError[] = [];
  if (typeof node.type === "string" && node.type && !TYPES.includes(node.type)) {
    out.push({ reason: "FieldValueNotSupported", field: `${path}.type`,
      body: `Unsupported value: ${JSON.stringify(node.type)}: supported values: ${
        TYPES.map((t) => `"${t}"`).join(", ")}` });
  }
  if (node.id) out.push(forbidden(`${path}.id`, "id is not supported"));
  if (node.additionalItems !== undefined) {
    out.push(forbidden(`${path}.additionalItems`, "additionalItems is not supported"));
  }
  if (sortedEntries(node.patternProperties).length) {
    out.push(forbidden(`${path}.patternProperties`, "patternProperties is not supported"));
  }
  if (sortedEntries(node.definitions).length) {
    out.push(forbidden(`${path}.definitions`, "definitions is not supported"));
  }
  if (node.dependencies !== undefined) out.push(forbidden(`${path}.dependencies`, "dependencies is not supported"));
  if (node.$ref !== undefined) out.push(forbidden(`${path}.$ref`, "$ref is not supported"));
  if (node.type === "null") {
    out.push(forbidden(`${path}.type`, "type cannot be set to null, use nullable as an alternative"));
  }
  if (Array.isArray(node.items) && node.items.length) {
    out.push(forbidden(`${path}.items`, "items must be a schema object and not an array"));
  }
  if (node.uniqueItems === true) {
    out.push(forbidden(`${path}.uniqueItems`,
      "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"));
  }
  const additional = node.additionalProperties;
  if (additional !== undefined) {
    if (sortedEntries(node.properties).length && (additional === false || isObj(additional))) {
      out.push(forbidden(`${path}.additionalProperties`, "additionalProperties and properties are mutual exclusive"));
    }
    out.push(...openAPIErrors(additional, `${path}.additionalProperties`));
  }
  out.push(...keyed(node.properties, `${path}.properties`, openAPIErrors));
  out.push(...openAPIErrors(node.not, `${path}.not`));
  for (const key of ["allOf", "oneOf", "anyOf"]) out.push(...indexed(node[key], `${path}.${key}`, openAPIErrors));
  out.push(...keyed(node.definitions, `${path}.definitions`, openAPIErrors));
  if (Array.isArray(node.items)) out.push(...indexed(node.items, `${path}.items`, openAPIErrors));
  else out.push(...openAPIErrors(node.items, `${path}.items`));
  out.push(...keyed(node.dependencies, `${path}.dependencies`, openAPIErrors));
  if (node["x-kubernetes-preserve-unknown-fields"] === false) {
    out.push(invalid(`${path}.x-kubernetes-preserve-unknown-fields`, false, "must be true or undefined"));
  }
  out.push(...listMapKeyErrors(node, path));
  return out;
}

/** A list-type map's keys that are neither required nor defaulted: an item without one could not be told apart. */
function listMapKeyErrors(node: Node, path: string): SchemaError[] {
  const items = node.items;
  if (node["x-kubernetes-list-type"] !== "map" || !isObj(items) || !isObj(items.properties)) return [];
  const requiredKeys = new Set(listed(items.required));
  return listed(node["x-kubernetes-list-map-keys"]).flatMap((key) => {
    const property = items.properties[key as string];
    if (!isObj(property) || requiredKeys.has(key) || property.default !== undefined) return [];
    return [required(`${path}.items.properties[${key}].default`,
      "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property")];
  });
}

type Level = "root" | "item" | "field";
const EMPTY_TYPE: Record<Level, string> = {
  root: "must not be empty at the root", item: "must not be empty for specified array items",
  field: "must not be empty for specified object fields",
};

/** validateStructuralInvariants: a type everywhere a value is, items on arrays, nothing typed inside x-of */
function structuralErrors(node: unknown, level: Level, path: string): SchemaError[] {
  if (!isObj(node)) return [];
  const out: SchemaError[] = [];
  if (node.type === "array" && node.items === undefined) out.push(required(`${path}.items`, "must be specified"));
  out.push(...structuralErrors(node.items, "item", `${path}.items`));
  out.push(...keyed(node.properties, `${path}.properties`, (child, at) => structuralErrors(child, "field", at)));
  if (isObj(node.additionalProperties) || node.additionalProperties === true) {
    if (level === "root") out.push(forbidden(`${path}.additionalProperties`, "must not be used at the root"));
    out.push(...structuralErrors(node.additionalProperties, "field", `${path}.additionalProperties`));
  }
  const intOrString = node["x-kubernetes-int-or-string"] === true;
  if (intOrString && node["x-kubernetes-preserve-unknown-fields"] === true) {
    out.push(invalid(`${path}.x-kubernetes-preserve-unknown-fields`, true,
      "must be false if x-kubernetes-int-or-string is true"));
  }
  out.push(...valueValidationErrors(node, isIntOrStringAnyOf(node.anyOf), path));
  if (!node.type && !intOrString && node["x-kubernetes-preserve-unknown-fields"] !== true) {
    out.push(required(`${path}.type`, EMPTY_TYPE[level]));
  }
  if (level === "root" && node.type && node.type !== "object") {
    out.push(invalid(`${path}.type`, node.type, "must be object at the root"));
  }
  return out;
}

function isIntOrStringAnyOf(anyOf: unknown): boolean {
  return Array.isArray(anyOf) && canonical(anyOf) === canonical([{ type: "integer" }, { type: "string" }]);
}

function valueValidationErrors(node: Node, skipAnyOf: boolean, path: string): SchemaError[] {
  const out: SchemaError[] = [];
  if (!skipAnyOf) out.push(...indexed(node.anyOf, `${path}.anyOf`, nestedErrors));
  out.push(...indexed(node.allOf, `${path}.allOf`, nestedErrors));
  out.push(...indexed(node.oneOf, `${path}.oneOf`, nestedErrors));
  out.push(...nestedErrors(node.not, `${path}.not`));
  return out;
}

/** What may not be said inside anyOf/allOf/oneOf/not (validateNestedValueValidation) */
function nestedErrors(node: unknown, path: string): SchemaError[] {
  if (!isObj(node)) return [];
  const out = [...valueValidationErrors(node, false, path), ...nestedErrors(node.items, `${path}.items`)];
  out.push(...keyed(node.properties, `${path}.properties`, nestedErrors));
  if (node.type) out.push(forbidden(`${path}.type`, "must be empty to be structural"));
  if (node.additionalProperties !== undefined) {
    out.push(forbidden(`${path}.additionalProperties`, "must be undefined to be structural"));
  }
  if (node.default !== undefined) out.push(forbidden(`${path}.default`, "must be undefined to be structural"));
  if (node.title) out.push(forbidden(`${path}.title`, "must be empty to be structural"));
  if (node.description) out.push(forbidden(`${path}.description`, "must be empty to be structural"));
  if (node.nullable === true) out.push(forbidden(`${path}.nullable`, "must be false to be structural"));
  for (const ext of ["preserve-unknown-fields", "embedded-resource", "int-or-string"]) {
    const key = `x-kubernetes-${ext}`;
    if (node[key] === true) out.push(forbidden(`${path}.${key}`, "must be false to be structural"));
  }
  if (isObj(node.properties) && node.properties.metadata !== undefined) {
    out.push(forbidden(`${path}.properties[metadata]`, "must not be specified in a nested context"));
  }
  return out;
}

/** The fields of apiextensions/v1's JSONSchemaProps: what a CRD's schema node is decoded into. */
const SCHEMA_FIELDS = new Set([
  "id", "$schema", "$ref", "description", "type", "format", "title", "default", "maximum", "exclusiveMaximum",
  "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
  "multipleOf", "enum", "maxProperties", "minProperties", "required", "items", "allOf", "oneOf", "anyOf", "not",
  "properties", "additionalProperties", "patternProperties", "dependencies", "additionalItems", "definitions",
  "externalDocs", "example", "nullable", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
  "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys", "x-kubernetes-list-type", "x-kubernetes-map-type",
  "x-kubernetes-validations",
]);
const SCHEMA_MAPS = ["properties", "patternProperties", "definitions", "dependencies"];
const SCHEMA_LISTS = ["allOf", "oneOf", "anyOf"];

/**
 * Drops (in place) the keys of a CRD's schemas that JSONSchemaProps has no field for ($id,
 * const, examples...), as decoding does on the real server; returns their paths, in document
 * order, as its `unknown field` warnings name them.
 */
export function dropUnknownSchemaFields(spec: Node): string[] {
  const dropped: string[] = [];
  const versions: unknown[] = Array.isArray(spec.versions) ? spec.versions : [];
  versions.forEach((v, i) => {
    const schema = isObj(v) && isObj(v.schema) ? v.schema.openAPIV3Schema : undefined;
    dropUnknown(schema, `spec.versions[${i}].schema.openAPIV3Schema`, dropped);
  });
  return dropped;
}

function dropUnknown(node: unknown, path: string, dropped: string[]): void {
  if (!isObj(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if (!SCHEMA_FIELDS.has(key)) {
      dropped.push(`${path}.${key}`);
      delete node[key];
    } else if (SCHEMA_MAPS.includes(key) && isObj(value)) {
      for (const [name, child] of Object.entries(value)) dropUnknown(child, `${path}.${key}.${name}`, dropped);
    } else if (SCHEMA_LISTS.includes(key) || (key === "items" && Array.isArray(value))) {
      listed(value).forEach((child, i) => dropUnknown(child, `${path}.${key}[${i}]`, dropped));
    } else if (key === "items" || key === "not" || key === "additionalProperties" || key === "additionalItems") {
      dropUnknown(value, `${path}.${key}`, dropped);
    }
  }
}
