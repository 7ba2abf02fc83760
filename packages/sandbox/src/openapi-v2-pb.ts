// The protobuf form of an OpenAPI v2 (Swagger) document, as client-go's discovery asks for it
// (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`): gnostic's openapi_v2.Document,
// encoded with protobufjs from the vendored descriptor (openapi-v2-protos.json: regenerate it with
// `bun test/cluster/gen-proto.ts`). kube-apiserver makes it with gnostic's compiler from the JSON
// document; this follows the same mapping: `$ref` is `_ref`, `x-*` keys are `vendor_extension`
// entries whose value is YAML (JSON is YAML), JSON maps are lists of `Named*` {name, value}, and
// gnostic's `oneof` wrappers (items, parameters, responses...) are chosen by the value's shape.

import protobuf from "protobufjs/light.js";
import descriptor from "./openapi-v2-protos.json" with { type: "json" };

let root: protobuf.Root | undefined;
function types(): protobuf.Root {
  return (root ??= protobuf.Root.fromJSON(descriptor as protobuf.INamespace));
}

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const anyOf = (v: unknown) => ({ yaml: `${JSON.stringify(v)}\n` });

const PARAMETER_IN: Record<string, string> = {
  query: "query_parameter_sub_schema", path: "path_parameter_sub_schema",
  header: "header_parameter_sub_schema", formData: "form_data_parameter_sub_schema",
};
const SECURITY_TYPE: Record<string, string> = {
  apiKey: "api_key_security", basic: "basic_authentication_security",
};

/** `name → value` entries of a JSON map as gnostic's list of Named* messages */
function named(type: protobuf.Type, json: Record<string, unknown>): object[] {
  const valueType = type.fields.value!.resolvedType;
  return Object.entries(json).map(([name, v]) => ({
    name, value: valueType instanceof protobuf.Type ? message(valueType, v) : v,
  }));
}

/** a `$ref` as gnostic's JsonReference, or undefined for anything else */
const referenceOr = (v: any) =>
  isObj(v) && typeof v.$ref === "string" ? { json_reference: { _ref: v.$ref } } : undefined;

/** gnostic's wrappers whose content depends on the JSON value's shape, or undefined for plain messages */
function wrapper(name: string, v: any): object | undefined {
  const t = (n: string) => types().lookupType(`openapi.v2.${n}`);
  switch (name) {
    case "Any": return anyOf(v);
    case "TypeItem": return { value: Array.isArray(v) ? v : [v] };
    case "StringArray": return { value: v };
    case "ItemsItem": return { schema: (Array.isArray(v) ? v : [v]).map((s) => message(t("Schema"), s)) };
    case "AdditionalPropertiesItem":
      return typeof v === "boolean" ? { boolean: v } : { schema: message(t("Schema"), v) };
    case "SchemaItem":
      return v?.type === "file" ? { file_schema: message(t("FileSchema"), v) } : { schema: message(t("Schema"), v) };
    case "ParametersItem": return referenceOr(v) ?? { parameter: message(t("Parameter"), v) };
    case "Parameter": {
      if (v?.in === "body") return { body_parameter: message(t("BodyParameter"), v) };
      const sub = PARAMETER_IN[v?.in] ?? "query_parameter_sub_schema";
      const typeName = sub.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());
      return { non_body_parameter: { [sub]: message(t(typeName), v) } };
    }
    case "ResponseValue": return referenceOr(v) ?? { response: message(t("Response"), v) };
    case "SecurityDefinitionsItem": {
      const field = SECURITY_TYPE[v?.type] ?? "api_key_security";
      const typeName = field === "api_key_security" ? "ApiKeySecurity" : "BasicAuthenticationSecurity";
      return { [field]: message(t(typeName), v) };
    }
    default: return undefined;
  }
}

/** the plain object of gnostic message `type` for a JSON value (field names as in the .proto) */
function message(type: protobuf.Type, json: any): object {
  const special = wrapper(type.name, json);
  if (special) return special;
  if (!isObj(json)) return {};
  const fields = type.fields;
  // a JSON map: Definitions, Properties, ParameterDefinitions... (Paths and Responses keep x-* apart)
  const mapField = [fields.additional_properties, fields.path, fields.response_code].find((f) => f?.repeated);
  const out: Record<string, unknown> = {};
  const entries: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(json)) {
    if (key.startsWith("x-") && fields.vendor_extension) {
      ((out.vendor_extension ??= []) as object[]).push({ name: key, value: anyOf(v) });
      continue;
    }
    if (mapField) { entries[key] = v; continue; }
    const field = fields[key === "$ref" ? "_ref" : snake(key)];
    if (!field) continue;
    const t = field.resolvedType;
    const one = (x: unknown) => (t instanceof protobuf.Type ? message(t, x) : x);
    out[field.name] = field.repeated ? (Array.isArray(v) ? v : [v]).map(one) : one(v);
  }
  if (mapField) out[mapField.name] = named(mapField.resolvedType as protobuf.Type, entries);
  return out;
}

/** a JSON OpenAPI v2 document as the bytes of gnostic's openapi_v2.Document */
export function encodeOpenAPIV2(doc: unknown): Uint8Array {
  const type = types().lookupType("openapi.v2.Document");
  // the plain object already has the message's shape: encode() takes it as is (fromObject would copy it all)
  return type.encode(message(type, doc)).finish();
}

/** bytes of an openapi_v2.Document back as a plain object (for tests and tools) */
export function decodeOpenAPIV2(bytes: Uint8Array): Record<string, any> {
  const type = types().lookupType("openapi.v2.Document");
  return type.toObject(type.decode(bytes), { longs: Number, defaults: false, arrays: true }) as Record<string, any>;
}
