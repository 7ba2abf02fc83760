// OpenAPI v3 (`/openapi/v3` and one document per group-version), what kubectl downloads before
// `create -f`, `apply` and `explain`. Built from what is served right now, so it follows CRDs as
// they come and go: every resource's paths with `x-kubernetes-group-version-kind` and the
// `fieldValidation` query parameter (kubectl then leaves validation to the server, which the
// sandbox does for custom resources: objects.ts, schema.ts), and the schemas in
// `components.schemas`: each CRD version's, and the built-in kinds' as kube-apiserver v1.37.2
// publishes them (kube-schemas.ts). Documents carry an ETag (their hash), are immutable under
// `?hash=`, and answer If-None-Match with 304.

import { addClosure, builtinSchemaName, builtinSchemas } from "./kube-schemas.ts";
import { SERVED_VERSION } from "./discovery.ts";
import { STORED_VERBS, type ResourceDef, type ResourceRegistry } from "./resources.ts";

const META = "io.k8s.apimachinery.pkg.apis.meta.v1";
/** what kube-openapi says of a kind's metadata field (v2 as v3) */
export const METADATA_DESCRIPTION = "Standard object's metadata. More info: " +
  "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const OBJECT_META = { description: METADATA_DESCRIPTION, type: "object" };
/** a list's query parameters (v2 as v3) */
export const LIST_QUERY = ["labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "watch"];

/** a resource's operations: on its collection, and on one object */
export interface PathItems { collection: Record<string, unknown>; item: Record<string, unknown> }

/** `api/v1`, `apis/apps/v1`: the key of a group-version in /openapi/v3 */
export function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

/** `dev.kobun.v1.KobunExample`, as kube-openapi names a custom resource's schema */
export function schemaName(def: ResourceDef, version: string): string {
  return `${def.group.split(".").reverse().join(".")}.${version}.${def.kind}`;
}

const addSchemas = (name: string, into: Record<string, unknown>) =>
  addClosure(builtinSchemas(), "#/components/schemas/", name, into);

export const PATCH = `${META}.Patch`;
/** what kube-openapi says of the Patch body, which no kind refers to */
export const PATCH_SCHEMA = {
  description: "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
  type: "object",
};

/** the patch media types a resource accepts: custom resources have no strategic merge patch */
export function patchTypes(def: ResourceDef): string[] {
  const types = ["application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"];
  return def.crdName ? types : [...types, "application/strategic-merge-patch+json"];
}

const query = (name: string) => ({ name, in: "query", schema: { type: "string", uniqueItems: true } });

function operations(def: ResourceDef, version: string, ref: unknown): PathItems {
  const gvk = { group: def.group, version, kind: def.kind };
  const body = ref ? { content: { "application/json": { schema: ref } } } : undefined;
  const op = (action: string, params: string[]) => ({
    ...(body && ["post", "put", "patch"].includes(action) ? { requestBody: body } : {}),
    parameters: params.map(query),
    responses: { "200": { description: "OK", ...(body ?? {}) } },
    "x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk,
  });
  const writes = ["dryRun", "fieldManager", "fieldValidation"];
  const collection: Record<string, unknown> = {};
  const item: Record<string, unknown> = {};
  if (def.verbs.includes("create")) collection.post = op("post", writes);
  if (def.verbs.includes("list")) collection.get = op("list", LIST_QUERY);
  if (def.verbs === STORED_VERBS) {
    item.get = op("get", []);
    item.put = op("put", writes);
    // the patch types by media type: kubectl computes a strategic merge patch only where it is listed
    const patch = { $ref: `#/components/schemas/${PATCH}` };
    const content = Object.fromEntries(patchTypes(def).map((t) => [t, { schema: patch }]));
    item.patch = { ...op("patch", [...writes, "force"]), requestBody: { content } };
    item.delete = op("delete", ["dryRun", "gracePeriodSeconds", "propagationPolicy"]);
  }
  return { collection, item };
}

/** the OpenAPI v3 document of one group-version, or undefined when nothing is served there */
export function groupVersionDocument(reg: ResourceRegistry, group: string, version: string): unknown | undefined {
  const defs = reg.all().filter((d) => d.group === group && d.versions.includes(version));
  if (!defs.length) return undefined;
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const def of defs) {
    const schema = def.schemas?.get(version);
    const builtin = def.crdName ? undefined : builtinSchemaName(group, version, def.kind);
    let ref: unknown;
    if (schema) {
      const name = schemaName(def, version);
      // TypeMeta's fields and ObjectMeta's ref replace the CRD's own, as the apiextensions server does
      const typeMeta = builtinSchemas()["io.k8s.api.core.v1.ConfigMap"].properties;
      const properties = {
        ...(schema.properties ?? {}), apiVersion: typeMeta.apiVersion, kind: typeMeta.kind,
        metadata: { allOf: [{ $ref: `#/components/schemas/${META}.ObjectMeta` }], ...OBJECT_META },
      };
      const gvk = [{ group: def.group, kind: def.kind, version }];
      schemas[name] = { ...schema, properties, "x-kubernetes-group-version-kind": gvk };
      addSchemas(`${META}.ObjectMeta`, schemas);
      ref = { $ref: `#/components/schemas/${name}` };
    } else if (builtin) {
      addSchemas(builtin, schemas);
      ref = { $ref: `#/components/schemas/${builtin}` };
    }
    const base = `/${gvPath(group, version)}${def.namespaced ? "/namespaces/{namespace}" : ""}/${def.plural}`;
    const { collection, item } = operations(def, version, ref);
    if (item.patch) schemas[PATCH] = PATCH_SCHEMA;
    if (Object.keys(collection).length) paths[base] = collection;
    if (Object.keys(item).length) paths[`${base}/{name}`] = item;
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: `v${SERVED_VERSION.major}.${SERVED_VERSION.minor}.${SERVED_VERSION.patch}` },
    paths,
    components: { schemas },
  };
}

function hashOf(doc: unknown): string {
  // Bun's hasher, not node:crypto's: see auth.ts.
  return new Bun.CryptoHasher("sha512").update(JSON.stringify(doc)).digest("hex").toUpperCase();
}

/** `/openapi/v3`: each served group-version with the URL of its current document */
export function openapiIndex(reg: ResourceRegistry): unknown {
  const paths: Record<string, unknown> = {};
  const gvs = [["", "v1"], ...[...reg.groups()].flatMap(([g, vs]) => vs.map((v) => [g, v]))] as [string, string][];
  for (const [group, version] of gvs) {
    const doc = groupVersionDocument(reg, group, version);
    const path = gvPath(group, version);
    if (doc) paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hashOf(doc)}` };
  }
  return { paths };
}

/** the response for `/openapi/v3[/...]`, or undefined for a group-version not served */
export function openapiResponse(
  reg: ResourceRegistry, rest: string[], req: Request, hash: string | null,
): Response | undefined {
  if (rest.length === 0) return Response.json(openapiIndex(reg), { headers: { "cache-control": "no-cache, private" } });
  const [head, a, b] = rest;
  const [group, version] =
    head === "api" && a && !b ? ["", a] : head === "apis" && a && b ? [a, b] : [undefined, undefined];
  if (group === undefined || version === undefined || rest.length > (group ? 3 : 2)) return undefined;
  const doc = groupVersionDocument(reg, group, version);
  if (!doc) return undefined;
  const etag = `"${hashOf(doc)}"`;
  const headers: Record<string, string> = {
    "content-type": "application/json", etag,
    // under the hash it was asked by, a document never changes; otherwise revalidate
    "cache-control": hash && `"${hash}"` === etag ? "public, immutable" : "no-cache, private",
  };
  if (req.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers });
  return new Response(JSON.stringify(doc), { headers });
}
