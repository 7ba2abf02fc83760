// A built-in kind's body decoded into its Go type, as kube-apiserver decodes a create's or an update's: a value of
// the wrong JSON type is a 400 in encoding/json's words ("json: cannot unmarshal string into Go struct field
// DeploymentSpec.spec.replicas of type int32"): the innermost struct, the path of JSON names (no list indices, no
// map keys), the Go type. The Go type is read from the kind's OpenAPI schema: a referenced definition is its
// package's last element and name (v1.Container), integers by their format; a string field of a named Go type
// (v1.Protocol) reads as `string`, which only the schema's want of a name leaves apart. Types with their own
// decoding (quantities, int-or-strings, times, raw JSON) are left to it, but for an int-or-string's number.

import { goSprint, goStdBase64Error, goValueWord } from "./go-json.ts";
import { builtinSchemaName, builtinSchemas, kindRegistered, schemaRef } from "./kube-schemas.ts";
import { invalidError } from "./schema.ts";
import type { ResourceDef } from "./resources.ts";
import { ApiStatusError, errors } from "./status.ts";

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
const REF = "#/components/schemas/";
/** definitions whose Go type decodes itself: anything it accepts is left to it */
const OWN_DECODING = new Set([
  "io.k8s.apimachinery.pkg.api.resource.Quantity", "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
  "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime", "io.k8s.apimachinery.pkg.runtime.RawExtension",
  "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON", "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
]);
const INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";

interface Node { schema: any; ref?: string }

/** the schema a node stands for, with the definition it names (a `$ref`, or the single `allOf` of a field) */
function follow(s: any): Node {
  let ref: string | undefined;
  for (let i = 0; i < 8 && isObj(s); i++) {
    const next = s.$ref ?? (Array.isArray(s.allOf) && s.allOf.length === 1 ? s.allOf[0]?.$ref : undefined);
    if (typeof next !== "string") break;
    ref = next.replace(REF, "");
    s = builtinSchemas()[ref];
  }
  return { schema: s, ref };
}

/** reflect's name of a node's Go type */
function goType({ schema: s, ref }: Node): string {
  if (ref) {
    const parts = ref.split(".");
    return `${parts.at(-2)}.${parts.at(-1)}`;
  }
  if (!isObj(s)) return "interface {}";
  if (s.type === "array") return `[]${goType(follow(s.items))}`;
  if (s.type === "object" && isObj(s.additionalProperties)) {
    return `map[string]${goType(follow(s.additionalProperties))}`;
  }
  if (s.type === "integer") return s.format === "int32" ? "int32" : "int64";
  if (s.type === "number") return "float64";
  if (s.type === "boolean") return "bool";
  if (s.type === "string") return s.format === "byte" ? "[]uint8" : "string";
  return "interface {}";
}

interface Where { struct: string; path: string }

/** what the Go type refuses of this JSON value, if the value is of a JSON type it does not take */
function refusal(node: Node, value: unknown): string | undefined {
  const s = node.schema;
  if (value === null || !isObj(s)) return undefined;
  const want = node.ref && !isObj(s.properties) ? undefined : s.type;
  const number = typeof value === "number";
  if (want === "integer") {
    if (!number) return goValueWord(value);
    const bits = s.format === "int32" ? 31 : 63;
    if (!Number.isInteger(value) || Math.abs(value) >= 2 ** bits) return `number ${value}`;
    return undefined;
  }
  if (want === "number") return number ? undefined : goValueWord(value);
  if (want === "boolean") return typeof value === "boolean" ? undefined : goValueWord(value);
  if (want === "string") return typeof value === "string" ? undefined : goValueWord(value);
  if (want === "array") return Array.isArray(value) ? undefined : goValueWord(value);
  if (want === "object" || isObj(s.properties)) return isObj(value) ? undefined : goValueWord(value);
  return undefined;
}

/** the first value Go would refuse under this node, in the body's order */
function firstError(value: unknown, node: Node, where: Where): string | undefined {
  if (node.ref && OWN_DECODING.has(node.ref)) return undefined;
  if (node.ref === INT_OR_STRING) {
    if (typeof value === "string" || value === null) return undefined;
    return typeError(refusal({ schema: { type: "integer", format: "int32" } }, value), where, "int32");
  }
  const refused = refusal(node, value);
  if (refused) return typeError(refused, where, goType(node));
  // a []byte is base64 that must decode: Go's error alone, with no field named
  if (typeof value === "string" && node.schema?.format === "byte") return goStdBase64Error(value);
  const s = node.schema;
  if (!isObj(s) || value === null) return undefined;
  // a list's items and a map's values are where the list or the map is: Go names no index and no key
  if (Array.isArray(value)) {
    return s.items ? firstOf(value.map((v) => ["", v]), () => follow(s.items), () => where) : undefined;
  }
  if (!isObj(value)) return undefined;
  if (isObj(s.properties)) {
    const struct = node.ref?.split(".").at(-1) ?? where.struct;
    return firstOf(Object.entries(value).filter(([k]) => k in s.properties), (k) => follow(s.properties[k]),
      (k) => ({ struct, path: where.path ? `${where.path}.${k}` : k }));
  }
  if (!isObj(s.additionalProperties)) return undefined;
  return firstOf(Object.entries(value), () => follow(s.additionalProperties), () => where);
}

/** the first error among these fields (or items), each with its node and place */
function firstOf(entries: [string, unknown][], node: (k: string) => Node, where: (k: string) => Where) {
  for (const [k, v] of entries) {
    const e = firstError(v, node(k), where(k));
    if (e) return e;
  }
  return undefined;
}

function typeError(refused: string | undefined, where: Where, type: string): string | undefined {
  if (!refused) return undefined;
  const into = where.path ? `Go struct field ${where.struct}.${where.path}` : "Go value";
  return `json: cannot unmarshal ${refused} into ${into} of type ${type}`;
}

/** Go's error decoding `body` into the built-in kind named `schemaName` (io.k8s.api.core.v1.ConfigMap), if any */
export function goDecodeError(schemaName: string, body: unknown): string | undefined {
  const root = follow(schemaRef(schemaName));
  return firstError(body, root, { struct: root.ref?.split(".").at(-1) ?? "", path: "" });
}

/**
 * A create's or an update's body of a built-in kind, refused as kube-apiserver refuses what it cannot decode
 * ("Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal ...")
 */
export function checkDecodes(def: ResourceDef, version: string, body: unknown): void {
  if (isObj(body)) checkTypeMeta(def, version, body);
  const name = def.crdName ? undefined : builtinSchemaName(def.group, version, def.kind);
  const error = name && isObj(body) ? goDecodeError(name, body) : undefined;
  if (!error) return;
  throw errors.badRequest(`${def.kind} in version "${version}" cannot be handled as a ${def.kind}: ${error}`);
}

/**
 * The apiVersion and kind a body names, judged as the decoder judges them before anything else: a custom resource's
 * must be the endpoint's (else 400, a kind 422); a built-in kind's are looked up in the scheme (unknown there, the kind
 * at another group or version, or another kind: three 400s in three wordings). Left out: the endpoint's.
 */
function checkTypeMeta(def: ResourceDef, version: string, body: Record<string, any>): void {
  const expected = def.group ? `${def.group}/${version}` : version;
  const apiVersion = typeof body.apiVersion === "string" ? body.apiVersion : "";
  const kind = typeof body.kind === "string" && body.kind ? body.kind : def.kind;
  if (def.crdName) {
    if (apiVersion !== expected) throw errors.badRequest(mismatch(apiVersion, expected));
    if (kind === def.kind) return;
    const message = `Invalid value: ${JSON.stringify(kind)}: must be ${def.kind}`;
    throw invalidError(def.group, kind, body.metadata?.name ?? "",
      [{ reason: "FieldValueInvalid", message, field: "kind" }]);
  }
  const slash = apiVersion.lastIndexOf("/");
  const [group, v] = !apiVersion ? [def.group, version]
    : [apiVersion.slice(0, Math.max(slash, 0)), apiVersion.slice(slash + 1)];
  const refuse = (why: string) =>
    errors.badRequest(`${kind} in version "${v}" cannot be handled as a ${def.kind}: ${why}`);
  if (!kindRegistered(group, v, kind)) {
    throw refuse(`no kind "${kind}" is registered for version "${apiVersion || expected}" in scheme `
      + `"pkg/runtime/scheme.go:111"`);
  }
  if (kind === def.kind) {
    if (group !== def.group || v !== version) throw errors.badRequest(mismatch(apiVersion, expected));
    return;
  }
  const external = builtinSchemaName(group, v, kind)?.split(".").at(-2) ?? v;
  throw refuse(`converting (${external}.${kind}) to (${def.group ? def.group.split(".")[0] : "core"}.${def.kind}): `
    + "unknown conversion");
}

const mismatch = (apiVersion: string, expected: string) =>
  `the API version in the data (${apiVersion}) does not match the expected API version (${expected})`;

/**
 * A merge or JSON patch whose result a built-in kind cannot decode: a 422 on the field "patch" (patchInvalid's),
 * then Go's error. (A strategic merge patch is refused in other words, the converter's, which only a Secret's
 * stringData says here: secret-data.ts.)
 */
export function checkPatchDecodes(def: ResourceDef, version: string, contentType: string, patched: unknown): void {
  if (contentType === "application/strategic-merge-patch+json" || !isObj(patched)) return;
  const name = def.crdName ? undefined : builtinSchemaName(def.group, version, def.kind);
  const error = name ? goDecodeError(name, patched) : undefined;
  if (error) throw patchInvalid(def, contentType, undefined, patched, error);
}

/**
 * A patch whose result cannot be decoded (`why`): a 422 on the field "patch". Its value is the patched object as Go
 * marshals it (a custom resource's map: every level's keys sorted; a built-in kind's struct, approximated by sorting
 * the top level), or for a strategic merge patch the patch as fmt prints its map.
 */
export function patchInvalid(
  def: ResourceDef, contentType: string, patch: unknown, patched: any, why: string,
): ApiStatusError {
  const sorted = (v: any, deep: boolean): any => Array.isArray(v) ? (deep ? v.map((x) => sorted(x, deep)) : v)
    : !isObj(v) ? v : Object.fromEntries(Object.keys(v).sort().map((k) => [k, deep ? sorted(v[k], deep) : v[k]]));
  // json.Marshal escapes what HTML would read
  const value = contentType === "application/strategic-merge-patch+json" ? goSprint(patch)
    : JSON.stringify(sorted(patched, !!def.crdName))
      .replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  const message = `Invalid value: ${JSON.stringify(value)}: ${why}`;
  return new ApiStatusError(422, "Invalid", ` "" is invalid: patch: ${message}`,
    { causes: [{ reason: "FieldValueInvalid", message, field: "patch" }] });
}
