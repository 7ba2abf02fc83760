// A core/v1 Secret's `stringData`, as kube-apiserver takes it (observed on the real server,
// test/e2e/secret-string-data.e2e.ts): a write-only field. Its conversion to the internal type
// merges each value into `data`, base64-encoded, a stringData key winning over the same data key;
// an empty `data` is dropped (omitempty), so neither is ever stored nor returned. This happens
// before admission and validation on create, update, every patch type and apply. A value that is
// not a string (null is taken as "") is refused where the real server's decoding meets it: 400 on
// POST and PUT, 422 on a merge, JSON or strategic patch, 500 on server-side apply (its typed patch).
// Then ValidateSecret's key rule (IsConfigMapKey), which stringData's keys meet as data's.

import { ApiStatusError, errors } from "./status.ts";
import type { ResourceDef } from "./resources.ts";
import type { Cause } from "./schema.ts";

/** How the write carries its body, which decides the error a bad stringData gets. */
export type StringDataWrite =
  | { via: "decode" }
  | { via: "patch"; contentType: string; patch: unknown }
  | { via: "apply"; configuration: any };

/** POST and PUT: the body decoded as it came */
export const DECODE: StringDataWrite = { via: "decode" };

interface BadValue { key?: string; value: unknown }

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);

export function isSecret(def: ResourceDef): boolean {
  return def.group === "" && def.plural === "secrets";
}

/** throws the error the real server gives this write for a stringData value that is not a string */
export function checkStringData(def: ResourceDef, body: any, write: StringDataWrite): void {
  if (!isSecret(def) || !isObj(body)) return;
  const bad = badValues(body.stringData);
  if (bad.length) throw refusal(write, body, bad);
}

/** The body with its stringData merged into data (a copy; `body` itself when there is nothing to do), once checked. */
export function takeStringData(def: ResourceDef, body: any, write: StringDataWrite): any {
  const emptyData = isObj(body?.data) && Object.keys(body.data).length === 0;
  if (!isSecret(def) || !isObj(body) || (!("stringData" in body) && !emptyData)) return body;
  checkStringData(def, body, write);
  const next = { ...body };
  mergeStringData(next);
  return next;
}

/** in place: stringData into data, neither left empty */
function mergeStringData(body: Record<string, any>): void {
  const strings = body.stringData;
  delete body.stringData;
  if (isObj(strings) && Object.keys(strings).length) {
    const data: Record<string, unknown> = isObj(body.data) ? { ...body.data } : {};
    for (const [key, value] of Object.entries(strings)) data[key] = Buffer.from(value ?? "", "utf8").toString("base64");
    body.data = data;
  }
  if (isObj(body.data) && Object.keys(body.data).length === 0) delete body.data;
}

/** the values Go's decoding would not take, in the body's order; a stringData that is no map is one */
function badValues(strings: unknown): BadValue[] {
  if (strings === null || strings === undefined) return [];
  if (!isObj(strings)) return [{ value: strings }];
  return Object.entries(strings)
    .filter(([, value]) => value !== null && typeof value !== "string")
    .map(([key, value]) => ({ key, value }));
}

function refusal(write: StringDataWrite, body: any, bad: BadValue[]): ApiStatusError {
  const first = bad[0]!;
  if (write.via === "apply") return applyRefusal(write.configuration, bad);
  if (write.via === "patch" && write.contentType === "application/strategic-merge-patch+json") {
    const why = first.key === undefined ? `cannot restore map from ${goTypeOf(first.value)}`
      : Number.isInteger(first.value) ? "cannot convert int64 to string" : "unrecognized type: string";
    return patchRefusal(goValue(write.patch), why);
  }
  const target = first.key === undefined ? "map[string]string" : "string";
  const unmarshal = `json: cannot unmarshal ${jsonTypeOf(first.value)} into Go struct field Secret.stringData ` +
    `of type ${target}`;
  if (write.via === "patch") return patchRefusal(patchedJson(body), unmarshal);
  return errors.badRequest(`Secret in version "v1" cannot be handled as a Secret: ${unmarshal}`);
}

/** the real server's 422 for a patch whose result does not decode: the whole value, then why */
function patchRefusal(value: string, why: string): ApiStatusError {
  const message = `Invalid value: ${JSON.stringify(value)}: ${why}`;
  return new ApiStatusError(422, "Invalid", ` "" is invalid: patch: ${message}`,
    { causes: [{ reason: "FieldValueInvalid", message, field: "patch" }] });
}

/** structured-merge-diff's refusal to type the apply configuration: a 500 with no reason */
function applyRefusal(configuration: any, bad: BadValue[]): ApiStatusError {
  const found = bad.map(({ key, value }) => key === undefined
    ? `.stringData: expected map, got &{${goValue(value)}}`
    : `.stringData.${key}: expected string, got &value.valueUnstructured{Value:${goSyntax(value)}}`);
  const meta = configuration?.metadata ?? {};
  const what = `${meta.namespace ?? ""}/${meta.name ?? ""}; /v1, Kind=Secret`;
  const listed = found.length === 1 ? found[0] : `errors:\n  ${found.join("\n  ")}`;
  return new ApiStatusError(500, "", `failed to create typed patch object (${what}): ${listed}`);
}

/** the patched object as Go marshals the map: top-level keys sorted */
function patchedJson(body: Record<string, unknown>): string {
  return JSON.stringify(Object.fromEntries(Object.keys(body).sort().map((k) => [k, body[k]])));
}

function jsonTypeOf(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (typeof value === "boolean") return "bool";
  return typeof value === "object" ? "object" : typeof value;
}

function goTypeOf(value: unknown): string {
  if (Array.isArray(value)) return "slice";
  if (typeof value === "number") return Number.isInteger(value) ? "int64" : "float64";
  return typeof value === "boolean" ? "bool" : typeof value;
}

/** Go's %v of a decoded JSON value */
function goValue(value: unknown): string {
  if (value === null || value === undefined) return "<nil>";
  if (Array.isArray(value)) return `[${value.map(goValue).join(" ")}]`;
  if (isObj(value)) return `map[${Object.keys(value).sort().map((k) => `${k}:${goValue(value[k])}`).join(" ")}]`;
  return String(value);
}

/** Go's %#v of a decoded JSON value */
function goSyntax(value: unknown): string {
  if (value === null || value === undefined) return "interface {}(nil)";
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[]interface {}{${value.map(goSyntax).join(", ")}}`;
  if (isObj(value)) {
    const entries = Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${goSyntax(value[k])}`);
    return `map[string]interface {}{${entries.join(", ")}}`;
  }
  return String(value);
}

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_FORMAT = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' " +
  "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/** ValidateSecret's keys (IsConfigMapKey), stringData's among them once merged: one cause per fault */
export function secretKeyCauses(body: any): Cause[] {
  return configKeyCauses(body?.data, "data");
}

/**
 * ValidateConfigMap's keys: data's and binaryData's (IsConfigMapKey), and a key in both (named
 * under data each time, as there)
 */
export function configMapKeyCauses(body: any): Cause[] {
  const data = isObj(body?.data) ? body.data : {};
  const binary = isObj(body?.binaryData) ? body.binaryData : {};
  const dup = (key: string, other: string): Cause => ({ reason: "FieldValueInvalid",
    message: `Invalid value: ${JSON.stringify(key)}: duplicate of key present in ${other}`, field: `data[${key}]` });
  const keyed = (field: string, key: string, other: Record<string, unknown>, otherField: string) =>
    [...configKeyCauses({ [key]: "" }, field), ...key in other ? [dup(key, otherField)] : []];
  return [
    ...Object.keys(data).flatMap((k) => keyed("data", k, binary, "binaryData")),
    ...Object.keys(binary).flatMap((k) => keyed("binaryData", k, data, "data")),
  ];
}

function configKeyCauses(map: unknown, field: string): Cause[] {
  const causes: Cause[] = [];
  for (const key of Object.keys(isObj(map) ? map : {})) {
    const faults: string[] = [];
    if (key.length > 253) faults.push("must be no more than 253 characters");
    if (!CONFIG_KEY.test(key)) faults.push(CONFIG_KEY_FORMAT);
    if (key === "..") faults.push("must not be '..'");
    else if (key.startsWith("..")) faults.push("must not start with '..'");
    const message = (fault: string) => `Invalid value: ${JSON.stringify(key)}: ${fault}`;
    for (const fault of faults) {
      causes.push({ reason: "FieldValueInvalid", message: message(fault), field: `${field}[${key}]` });
    }
  }
  return causes;
}
