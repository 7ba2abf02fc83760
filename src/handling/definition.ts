// Schema first: `defineResource({ group, kind, plural, schema: { spec, status } })` with the
// schema written in TypeBox (`import { Type } from "typebox"`), whose schemas ARE JSON Schema
// objects with static types. One definition gives the handlers' types (a typed token), and the
// CRD with its structural OpenAPI v3 schema, printer columns and status subresource, which
// `kobun manifests` prints and `kobun dev` installs into the sandbox (which then validates
// objects against it). Only TypeBox's types are imported: nothing of it is loaded at run time
// by kobun itself.

import type { Static, TSchema } from "typebox";
import type { KubeObject, ObjectMeta } from "../kube/types.ts";
import { resource, type ResourceToken } from "./resource.ts";
import { STATUS_KEY } from "./progress.ts";

export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  /** A JSONPath into the object, like ".spec.size". */
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

export interface ResourceDefinition<Spec extends TSchema, Status extends TSchema | undefined> {
  group: string;
  kind: string;
  plural: string;
  singular?: string;
  shortNames?: string[];
  /** Default "Namespaced". */
  scope?: "Namespaced" | "Cluster";
  /** Served versions, the first one stored. Default ["v1"]. Every version has this schema. */
  versions?: readonly string[];
  schema: { spec: Spec; status?: Status };
  printerColumns?: readonly PrinterColumn[];
}

/** The objects of a defined resource, as handlers see them. */
export interface DefinedObject<Spec, Status> {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

export type DefinedToken<Spec extends TSchema, Status extends TSchema | undefined> = ResourceToken<
  DefinedObject<Static<Spec>, Status extends TSchema ? Static<Status> : Record<string, any>>
> & { readonly crd: CrdObject };

/** A CustomResourceDefinition as defineResource writes it. */
export type CrdObject = KubeObject & { spec: Record<string, any> };

const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** The CRDs of the resources defined with defineResource, keyed by token (read by the registry). */
const definitions = new WeakMap<object, KubeObject>();

export function definitionOf(selector: unknown): KubeObject | undefined {
  return typeof selector === "object" && selector !== null ? definitions.get(selector) : undefined;
}

export function defineResource<Spec extends TSchema, Status extends TSchema | undefined = undefined>(
  definition: ResourceDefinition<Spec, Status>,
): DefinedToken<Spec, Status> {
  const { group, kind, plural } = definition;
  const versions = definition.versions ?? ["v1"];
  const where = `defineResource(${JSON.stringify(kind)})`;
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/.test(group ?? "")) throw new Error(`${where}: group must be a DNS subdomain with a dot, like "example.com"`);
  if (!/^[A-Z][A-Za-z0-9]*$/.test(kind ?? "")) throw new Error(`${where}: kind must be CamelCase, like "KobunExample"`);
  if (!DNS_LABEL.test(plural ?? "")) throw new Error(`${where}: plural must be lowercase, like "kobunexamples"`);
  if (versions.length === 0 || versions.some((v) => !/^v\d+((alpha|beta)\d+)?$/.test(v))) throw new Error(`${where}: versions must be like ["v1"] or ["v1", "v1beta1"]`);
  if (definition.schema?.spec === undefined) throw new Error(`${where}: schema.spec is required (a TypeBox schema, e.g. Type.Object({...}))`);
  const crd = crdOf(definition, versions);
  const token = resource(`${plural}.${group}/${versions[0]}`);
  const defined = Object.freeze(Object.defineProperties({ ...token }, {
    crd: { value: crd, enumerable: false },
    toJSON: { value: () => JSON.parse(JSON.stringify(token)), enumerable: false },
  }));
  definitions.set(defined, crd);
  return defined as DefinedToken<Spec, Status>;
}

function crdOf(definition: ResourceDefinition<TSchema, TSchema | undefined>, versions: readonly string[]): CrdObject {
  const { group, kind, plural, schema } = definition;
  // JSON round trip: TypeBox keeps its bookkeeping under symbol keys, which a CRD must not carry.
  const properties: Record<string, unknown> = { spec: plain(schema.spec) };
  if (schema.status) properties.status = withProgressRoom(plain(schema.status));
  const openAPIV3Schema = { type: "object", properties, required: ["spec"] };
  const columns = definition.printerColumns?.map((c) => ({ ...c }));
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: definition.scope ?? "Namespaced",
      names: {
        kind, plural, singular: definition.singular ?? kind.toLowerCase(), listKind: `${kind}List`,
        ...(definition.shortNames ? { shortNames: [...definition.shortNames] } : {}),
      },
      versions: versions.map((name, i) => ({
        name, served: true, storage: i === 0,
        schema: { openAPIV3Schema },
        ...(schema.status ? { subresources: { status: {} } } : {}),
        ...(columns?.length ? { additionalPrinterColumns: columns } : {}),
      })),
    },
  };
}

/**
 * kobun keeps its progress at status.kobun (progress.ts) beside the handlers' results, one
 * PATCH per cycle; a status schema that pruned it would push the progress to annotations, at
 * two PATCHes per cycle. The status type handlers see does not name it: it is kobun's own.
 */
function withProgressRoom(status: any): unknown {
  if (typeof status !== "object" || status === null || status.type !== "object" || status.properties?.[STATUS_KEY]) return status;
  return { ...status, properties: { ...status.properties, [STATUS_KEY]: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } };
}

function plain(schema: TSchema): unknown {
  return structural(JSON.parse(JSON.stringify(schema)));
}

/**
 * What TypeBox writes that a CRD's structural schema cannot say: a union of literals
 * (anyOf of consts) or one literal (const) becomes an enum of that type.
 */
function structural(node: any): any {
  if (Array.isArray(node)) return node.map(structural);
  if (typeof node !== "object" || node === null) return node;
  const { anyOf, oneOf, const: only, ...rest } = node;
  const choices = anyOf ?? oneOf;
  const out: Record<string, any> = {};
  for (const [key, value] of Object.entries(rest)) out[key] = structural(value);
  if (Array.isArray(choices) && choices.length > 0 && choices.every((c: any) => "const" in c && c.type === choices[0].type)) {
    return { ...out, type: choices[0].type, enum: choices.map((c: any) => c.const) };
  }
  if (anyOf !== undefined) out.anyOf = structural(anyOf);
  if (oneOf !== undefined) out.oneOf = structural(oneOf);
  if ("const" in node) out.enum = [only];
  return out;
}
