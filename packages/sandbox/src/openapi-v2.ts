// OpenAPI v2 at `/openapi/v2`: what `kubectl explain --output=plaintext-openapiv2` reads, and
// what kubectl falls back to when v3 fails (apply's patch types, the fieldValidation check,
// client-side validation). Built, as v3 is (openapi.ts), from what is served right now: each
// resource's paths with `x-kubernetes-action` and `x-kubernetes-group-version-kind`, and in
// `definitions` the built-in kinds as kube-apiserver v1.37.2 publishes them (kube-schemas.ts) and
// each CRD version's schema made v2 as the apiextensions server does it (no allOf/oneOf/anyOf/not,
// nullable and preserve-unknown-fields lose their types). JSON or gnostic protobuf by Accept
// (openapi-v2-pb.ts), one ETag for both (the JSON's hash, as kube-openapi's handler does), 304
// on If-None-Match, 406 for anything else.

import { addClosure, builtinDefinitions, builtinSchemaName } from "./kube-schemas.ts";
import { SERVED_VERSION } from "./discovery.ts";
import {
  gvPath, LIST_QUERY, METADATA_DESCRIPTION, PATCH, PATCH_SCHEMA, patchTypes, schemaName, type PathItems,
} from "./openapi.ts";
import { STORED_VERBS, type ResourceDef, type ResourceRegistry } from "./resources.ts";

const META = "io.k8s.apimachinery.pkg.apis.meta.v1";
const METADATA = { description: METADATA_DESCRIPTION, $ref: `#/definitions/${META}.ObjectMeta` };
const JSON_TYPE = "application/json";
const PROTOBUF_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
/** what clients may ask for; client-go still sends the older `@v1.0` spelling */
const ACCEPTED: [string, string][] = [
  ["application/json", JSON_TYPE],
  ["application/com.github.proto-openapi.spec.v2@v1.0+protobuf", PROTOBUF_TYPE],
  ["application/com.github.proto-openapi.spec.v2.v1.0+protobuf", PROTOBUF_TYPE],
];

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);

/** a CRD schema as OpenAPI v2 can say it (apiextensions' ToStructuralOpenAPIV2) */
export function toV2Schema(s: unknown): unknown {
  if (!isObj(s)) return s;
  const out: Record<string, any> = { ...s };
  for (const k of ["allOf", "oneOf", "anyOf", "not", "nullable"]) delete out[k];
  if (s.nullable === true) for (const k of ["type", "items", "properties"]) delete out[k];
  if (s["x-kubernetes-preserve-unknown-fields"] === true) {
    delete out.items;
    delete out.properties;
    if (out.type === "object") delete out.type;
  }
  if (out.type === "array" && out.items === undefined) delete out.type;
  if (isObj(out.properties)) {
    const props = out.properties;
    out.properties = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, toV2Schema(v)]));
    if (Array.isArray(out.required)) {
      out.required = out.required.filter((f: string) => props[f]?.nullable !== true);
      if (!out.required.length) delete out.required;
    }
  }
  if (isObj(out.additionalProperties)) {
    if (out.additionalProperties.nullable === true) delete out.required;
    out.additionalProperties = toV2Schema(out.additionalProperties);
  }
  if (isObj(out.items)) out.items = toV2Schema(out.items);
  return out;
}

/** a CRD version's definition: its schema with TypeMeta's fields and a ref to ObjectMeta */
function crdDefinition(def: ResourceDef, version: string, schema: Record<string, any>): Record<string, any> {
  const gvk = [{ group: def.group, kind: def.kind, version }];
  if (schema["x-kubernetes-preserve-unknown-fields"] === true) {
    return { type: "object", "x-kubernetes-group-version-kind": gvk };
  }
  const v2 = toV2Schema(schema) as Record<string, any>;
  const typeMeta = builtinDefinitions()["io.k8s.api.core.v1.ConfigMap"].properties;
  return {
    ...v2, type: "object",
    properties: { ...(v2.properties ?? {}), apiVersion: typeMeta.apiVersion, kind: typeMeta.kind, metadata: METADATA },
    "x-kubernetes-group-version-kind": gvk,
  };
}

const addDefinitions = (name: string, into: Record<string, unknown>) =>
  addClosure(builtinDefinitions(), "#/definitions/", name, into);

const queryParam = (name: string) => ({ uniqueItems: true, type: "string", name, in: "query" });

function pathItems(def: ResourceDef, version: string, ref: unknown): PathItems {
  const gvk = { group: def.group, kind: def.kind, version };
  const body = ref ? [{ name: "body", in: "body", required: true, schema: ref }] : [];
  const op = (action: string, params: string[], withBody: boolean) => ({
    consumes: ["*/*"], produces: [JSON_TYPE, "application/yaml"], schemes: ["https"],
    parameters: [...(withBody ? body : []), ...params.map(queryParam)],
    responses: {
      "200": { description: "OK", ...(ref ? { schema: ref } : {}) }, "401": { description: "Unauthorized" },
    },
    "x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk,
  });
  const writes = ["dryRun", "fieldManager", "fieldValidation"];
  const collection: Record<string, unknown> = {};
  const item: Record<string, unknown> = {};
  if (def.verbs.includes("create")) collection.post = op("post", writes, true);
  if (def.verbs.includes("list")) collection.get = op("list", LIST_QUERY, false);
  if (def.verbs === STORED_VERBS) {
    item.get = op("get", [], false);
    item.put = op("put", writes, true);
    const patchBody = { name: "body", in: "body", required: true, schema: { $ref: `#/definitions/${PATCH}` } };
    const patch = op("patch", [...writes, "force"], false);
    // kube-openapi lists json-patch first, then merge, strategic and apply
    const [apply, ...rest] = patchTypes(def);
    item.patch = { ...patch, consumes: [...rest, apply], parameters: [patchBody, ...patch.parameters] };
    item.delete = op("delete", ["dryRun", "gracePeriodSeconds", "propagationPolicy"], false);
    const description = `name of the ${def.kind}`;
    item.parameters = [{ uniqueItems: true, type: "string", description, name: "name", in: "path", required: true }];
  }
  if (def.namespaced) {
    const description = "object name and auth scope, such as for teams and projects";
    const ns = { uniqueItems: true, type: "string", description, name: "namespace", in: "path", required: true };
    collection.parameters = [ns];
    item.parameters = [...((item.parameters as unknown[]) ?? []), ns];
  }
  return { collection, item };
}

/** the whole OpenAPI v2 document of what is served now */
export function openapiV2Document(reg: ResourceRegistry): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  const definitions: Record<string, unknown> = {};
  for (const def of reg.all()) {
    for (const version of def.versions) {
      const schema = def.schemas?.get(version);
      const builtin = def.crdName ? undefined : builtinSchemaName(def.group, version, def.kind);
      let name: string | undefined;
      if (schema) {
        name = schemaName(def, version);
        definitions[name] = crdDefinition(def, version, schema);
        addDefinitions(`${META}.ObjectMeta`, definitions);
      } else if (builtin) {
        name = builtin;
        addDefinitions(builtin, definitions);
      }
      const base = `/${gvPath(def.group, version)}${def.namespaced ? "/namespaces/{namespace}" : ""}/${def.plural}`;
      const { collection, item } = pathItems(def, version, name ? { $ref: `#/definitions/${name}` } : undefined);
      if (Object.keys(collection).some((k) => k !== "parameters")) paths[base] = collection;
      if (Object.keys(item).some((k) => k !== "parameters")) paths[`${base}/{name}`] = item;
      if (item.patch) definitions[PATCH] = PATCH_SCHEMA;
    }
  }
  return {
    swagger: "2.0",
    info: { title: "Kubernetes", version: `${SERVED_VERSION.major}.${SERVED_VERSION.minor}` },
    paths, definitions,
    securityDefinitions: {
      BearerToken: { description: "Bearer Token authentication", type: "apiKey", name: "authorization", in: "header" },
    },
    security: [{ BearerToken: [] }],
  };
}

interface Built { crds: ResourceDef[]; json: string; etag: string; protobuf?: Uint8Array }
const built = new WeakMap<ResourceRegistry, Built>();

/** the document of `reg` as served, rebuilt only when its CRDs changed (a CRD's update re-registers it) */
async function current(reg: ResourceRegistry, wantProtobuf: boolean): Promise<Built> {
  const crds = reg.all().filter((d) => d.crdName);
  let b = built.get(reg);
  if (!b || b.crds.length !== crds.length || b.crds.some((d, i) => d !== crds[i])) {
    const json = JSON.stringify(openapiV2Document(reg));
    b = { crds, json, etag: `"${new Bun.CryptoHasher("sha512").update(json).digest("hex").toUpperCase()}"` };
    built.set(reg, b);
  }
  if (wantProtobuf && !b.protobuf) {
    // loaded on first use, as the protobuf request bodies are (server.ts)
    const { encodeOpenAPIV2 } = await import("./openapi-v2-pb.ts");
    b.protobuf = encodeOpenAPIV2(JSON.parse(b.json));
  }
  return b;
}

/** the media type to answer an Accept header with, by its clauses' q (first wins on a tie), or undefined */
export function negotiateV2(accept: string | null): string | undefined {
  const clauses = (accept?.trim() ? accept : "*/*").split(",").map((c, i) => {
    const [type = "", ...params] = c.trim().split(";").map((p) => p.trim());
    const q = Number(params.find((p) => p.startsWith("q="))?.slice(2) ?? 1);
    return { type: type.toLowerCase(), q: Number.isNaN(q) ? 0 : q, i };
  }).filter((c) => c.q > 0).sort((a, b) => b.q - a.q || a.i - b.i);
  for (const { type } of clauses) {
    const [main, sub] = type.split("/");
    const hit = ACCEPTED.find(
      ([t]) => (main === "*" || t.startsWith(`${main}/`)) && (sub === "*" || t === `${main}/${sub}`),
    );
    if (hit) return hit[1];
  }
  return undefined;
}

/** the response for `GET /openapi/v2` */
export async function openapiV2Response(reg: ResourceRegistry, req: Request): Promise<Response> {
  const type = negotiateV2(req.headers.get("accept"));
  if (!type) return new Response(null, { status: 406, headers: { vary: "Accept" } });
  const b = await current(reg, type === PROTOBUF_TYPE);
  const headers = { "content-type": type, etag: b.etag, vary: "Accept" };
  if (req.headers.get("if-none-match") === b.etag) return new Response(null, { status: 304, headers });
  return new Response(type === PROTOBUF_TYPE ? b.protobuf! : b.json, { headers });
}
