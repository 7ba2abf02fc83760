// Responses in `application/vnd.kubernetes.protobuf`, as kube-apiserver answers a client whose
// Accept prefers it (client-go's typed clients: kubectl's create, describe, auth can-i...): a
// built-in object's JSON form turned into its generated.proto message (the descriptor protobuf.ts
// decodes request bodies with), wrapped in the "k8s\0" envelope's runtime.Unknown. The inverse of
// protobuf.ts's decoding: times as seconds and nanos, quantities and int-or-strings as their
// messages, managedFields' FieldsV1 as JSON bytes, base64 strings as bytes, embedded structs
// gathered back from their inlined fields. Lists, watch events and custom resources stay JSON.

import protobuf from "protobufjs/light.js";
import { inlined, MAGIC, messageName, types } from "./protobuf.ts";

const META = "k8s.io.apimachinery.pkg.apis.meta.v1";
const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
const utf8 = (text: string) => new TextEncoder().encode(text);

/** RFC 3339 with any fraction → seconds and nanos */
function timeOf(v: unknown): { seconds: number; nanos: number } | undefined {
  const m = typeof v === "string" ? /^(.*?T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(v) : null;
  if (!m) return undefined;
  const nanos = Number((m[2] ?? "").padEnd(9, "0").slice(0, 9));
  return { seconds: Math.floor(Date.parse(`${m[1]}${m[3]}`) / 1000), nanos };
}

const DURATION_UNITS: Record<string, number> = { h: 3600e9, m: 60e9, s: 1e9, ms: 1e6, us: 1e3, "µs": 1e3, ns: 1 };

/** Go's duration text ("1h2m3.5s") → nanoseconds */
function durationOf(v: unknown): number {
  let total = 0;
  for (const [, n, unit] of String(v).matchAll(/([0-9.]+)(h|ms|us|µs|ns|m|s)/g)) {
    total += Number(n) * DURATION_UNITS[unit!]!;
  }
  return Math.round(total);
}

/** the message of well-known apimachinery types, or undefined for ordinary ones */
function special(type: protobuf.Type, v: unknown): { value: unknown } | undefined {
  switch (type.fullName.slice(1)) {
    case `${META}.Time`:
    case `${META}.MicroTime`: {
      const t = timeOf(v);
      return { value: t && (type.name === "Time" ? { seconds: t.seconds, nanos: 0 } : t) };
    }
    case `${META}.Duration`:
      return { value: { duration: durationOf(v) } };
    case `${META}.FieldsV1`:
      return { value: { Raw: utf8(JSON.stringify(v)) } };
    case "k8s.io.apimachinery.pkg.runtime.RawExtension":
      return { value: { raw: utf8(JSON.stringify(v)) } };
    case "k8s.io.apimachinery.pkg.api.resource.Quantity":
      return { value: { string: String(v) } };
    case "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
      return { value: typeof v === "number" ? { type: 0, intVal: v } : { type: 1, strVal: String(v) } };
    default:
      return undefined;
  }
}

function fieldValue(field: protobuf.Field, v: unknown): unknown {
  const t = field.resolvedType;
  if (t instanceof protobuf.Type) return fromJson(t, v);
  if (field.type === "bytes" && typeof v === "string") return Buffer.from(v, "base64");
  return v;
}

function fromJson(type: protobuf.Type, json: unknown): unknown {
  const s = special(type, json);
  if (s) return s.value;
  if (!isObj(json)) return undefined;
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    // an embedded struct's fields are the parent's own in JSON
    if (inlined(type, field.name) && field.resolvedType instanceof protobuf.Type) {
      out[field.name] = fromJson(field.resolvedType, json);
      continue;
    }
    const v = json[field.name];
    if (v === undefined || v === null) continue;
    let value: unknown;
    if (field.map) {
      value = isObj(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fieldValue(field, x)])) : undefined;
    }
    else if (field.repeated) value = Array.isArray(v) ? v.map((x) => fieldValue(field, x)) : undefined;
    else value = fieldValue(field, v);
    if (value !== undefined) out[field.name] = value;
  }
  return out;
}

/** a built-in object as a protobuf response body, or undefined for a kind without a message here */
export function encodeProtobufObject(obj: { apiVersion?: string; kind?: string }): Uint8Array | undefined {
  const apiVersion = obj.apiVersion ?? "";
  const kind = obj.kind ?? "";
  const type = types().lookup(messageName(apiVersion, kind));
  if (!(type instanceof protobuf.Type)) return undefined;
  const raw = type.encode(fromJson(type, obj) as object).finish();
  const unknown = types().lookupType("k8s.io.apimachinery.pkg.runtime.Unknown");
  const body = unknown.encode({ typeMeta: { apiVersion, kind }, raw, contentEncoding: "", contentType: "" }).finish();
  const out = new Uint8Array(MAGIC.length + body.length);
  out.set(MAGIC);
  out.set(body, MAGIC.length);
  return out;
}
