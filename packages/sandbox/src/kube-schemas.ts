/// <reference path="./assets.d.ts" />
// The built-in kinds' OpenAPI v3 schemas as kube-apiserver v1.37.2 publishes them
// (kube-openapi.json.gz: regenerate with `bun test/cluster/gen-openapi.ts`), read on first use:
// served in /openapi/v3 (openapi.ts, for `kubectl explain`) and, as v2 definitions, in
// /openapi/v2 (openapi-v2.ts), and the judge of
// fieldValidation=Strict for built-in kinds (which fields a kind does not have).
// The reference above brings the asset module declaration along wherever this file is
// typechecked (a project that imports kobun from node_modules includes only what it imports).

import { readFileSync } from "node:fs";
import vendoredPath from "./kube-openapi.json.gz" with { type: "file" };

interface Vendored {
  schemas: Record<string, any>;
  groupVersions: Record<string, { kinds: Record<string, string> }>;
  /** the same kinds' OpenAPI v2 definitions (refs are `#/definitions/...`) */
  definitions: Record<string, any>;
}
let vendored: Vendored | undefined;

export function builtinSchemas(): Record<string, any> {
  return load().schemas;
}

/** the built-in kinds' OpenAPI v2 definitions, by the same names as their v3 schemas */
export function builtinDefinitions(): Record<string, any> {
  return load().definitions;
}

function load(): Vendored {
  return (vendored ??= JSON.parse(new TextDecoder().decode(Bun.gunzipSync(readFileSync(vendoredPath)))) as Vendored);
}

/** `io.k8s.api.core.v1.ConfigMap` for ("", "v1", "ConfigMap"), or undefined */
export function builtinSchemaName(group: string, version: string, kind: string): string | undefined {
  return load().groupVersions[group ? `apis/${group}/${version}` : `api/${version}`]?.kinds[kind];
}

/**
 * Whether kube-apiserver's scheme knows this kind at this group and version: served, or at an alpha or beta of a
 * group that serves it (the scheme keeps versions it no longer serves).
 */
export function kindRegistered(group: string, version: string, kind: string): boolean {
  if (builtinSchemaName(group, version, kind) || UNSERVED[`${group}/${version}`]?.includes(kind)) return true;
  // meta.k8s.io's kinds are registered in every group's versions
  if (kind === "Status" && /^v\d+((alpha|beta)\d+)?$/.test(version) && kindGroupServed(group)) return true;
  if (!/^v\d+(alpha|beta)\d+$/.test(version)) return false;
  return kindGroupServed(group, kind);
}

/** versions the scheme has beyond the vendored ones (one serving nothing, one the sandbox does not serve) */
const UNSERVED: Record<string, string[]> = {
  "extensions/v1beta1": ["DaemonSet", "Deployment", "Ingress", "NetworkPolicy", "ReplicaSet"],
  "autoscaling/v1": ["HorizontalPodAutoscaler", "Scale"],
};

/** whether some version of the group is served (with `kind`, if named) */
function kindGroupServed(group: string, kind?: string): boolean {
  const prefix = group ? `apis/${group}/` : "api/";
  return Object.entries(load().groupVersions).some(([gv, { kinds }]) =>
    gv.startsWith(prefix) && !gv.slice(prefix.length).includes("/") && (kind === undefined || kind in kinds));
}

/** schema `name` of `all` and every schema it refers to (`$ref`s are `prefix` + name), into `into` */
export function addClosure(
  all: Record<string, unknown>, prefix: string, name: string, into: Record<string, unknown>,
): void {
  if (into[name] || !all[name]) return;
  into[name] = all[name];
  JSON.stringify(all[name], (k, v) => {
    if (k === "$ref" && typeof v === "string") addClosure(all, prefix, v.replace(prefix, ""), into);
    return v;
  });
}

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);

// the vendored schemas never change, so a schema node resolves to the same node for the process
const resolved = new WeakMap<object, any>();

/** a schema with its `$ref` (or single `allOf` ref, as metadata fields have) followed */
export function resolveSchema(s: any): any {
  if (!isObj(s)) return s;
  let out = resolved.get(s);
  if (out === undefined && !resolved.has(s)) resolved.set(s, (out = followRefs(s)));
  return out;
}

function followRefs(s: any): any {
  for (let i = 0; i < 8 && isObj(s); i++) {
    const ref = s.$ref ?? (Array.isArray(s.allOf) && s.allOf.length === 1 ? s.allOf[0]?.$ref : undefined);
    if (typeof ref !== "string") return s;
    s = builtinSchemas()[ref.replace("#/components/schemas/", "")];
  }
  return s;
}

/**
 * `unknownFields`, each also deleted from `body`: what a built-in kind's decoding drops (fieldValidation Warn or
 * Ignore), its paths said back for the warnings.
 */
export function dropUnknownFields(schemaName: string, body: unknown): string[] {
  const out: string[] = [];
  walk(body, schemaRef(schemaName), "", out, true);
  return out;
}

function walk(value: unknown, schema: unknown, path: string, out: string[], drop = false): void {
  const s = resolveSchema(schema);
  if (!isObj(s) || s["x-kubernetes-preserve-unknown-fields"] === true) return;
  if (Array.isArray(value)) {
    if (s.items) value.forEach((item, i) => walk(item, s.items, `${path}[${i}]`, out, drop));
    return;
  }
  if (!isObj(value)) return;
  const at = (k: string) => (path ? `${path}.${k}` : k);
  if (isObj(s.properties)) {
    for (const [k, v] of Object.entries(value)) {
      if (k in s.properties) walk(v, s.properties[k], at(k), out, drop);
      else {
        out.push(at(k));
        if (drop) delete value[k];
      }
    }
  } else if (isObj(s.additionalProperties)) {
    for (const [k, v] of Object.entries(value)) walk(v, s.additionalProperties, at(k), out, drop);
  }
}

/** the schema of a built-in kind by its name (`io.k8s.api.core.v1.ConfigMap`) */
export const schemaRef = (name: string): { $ref: string } => {
  // one object per name, so resolveSchema's memo holds across writes
  let ref = refs.get(name);
  if (!ref) refs.set(name, (ref = Object.freeze({ $ref: `#/components/schemas/${name}` })));
  return ref;
};
const refs = new Map<string, { $ref: string }>();

/** the fields of `body` that its kind's schema does not have (`spec.foo`, `spec.containers[0].bar`) */
export function unknownFields(schemaName: string, body: unknown): string[] {
  const out: string[] = [];
  walk(body, schemaRef(schemaName), "", out);
  return out;
}
