// Schema first: `defineResource({ group, kind, plural, schema: { spec, status } })` with the
// schema written in TypeBox (`import { Type } from "typebox"`), whose schemas ARE JSON Schema
// objects with static types. One definition gives the handlers' types (a typed token), and the
// CRD with its structural OpenAPI v3 schema, printer columns and status subresource, which
// `kobun manifests` prints and `kobun dev` installs into the sandbox (which then validates
// objects against it). Only TypeBox's types are imported: nothing of it is loaded at run time
// by kobun itself. crd.ts writes the CRD out.

import type { Static, TSchema } from "typebox";
import type { KubeObject, ObjectMeta } from "../kube/index.ts";
import { resource, type ResourceToken } from "./resource.ts";
import { RegistrationError } from "./registration.ts";
import { crdOf, type CrdObject, type PrinterColumn, type VersionPlan } from "./crd.ts";

/**
 * A resource defined schema first, one TypeBox schema for every version (for a schema per version:
 * VersionedDefinition).
 */
export interface ResourceDefinition<Spec extends TSchema, Status extends TSchema | undefined> {
  group: string;
  kind: string;
  plural: string;
  singular?: string;
  shortNames?: string[];
  /** Default "Namespaced". */
  scope?: "Namespaced" | "Cluster";
  /**
   * Served versions, the first one stored. Default ["v1"]. Every version has this schema (for a schema per version:
   * VersionedDefinition).
   */
  versions?: readonly string[];
  /** `status` omitted: an open status (any fields), where handlers' results and kobun's progress go. */
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

/** The token of a defined resource: typed by its schema, carrying its CRD (`.crd`). */
export type DefinedToken<Spec extends TSchema, Status extends TSchema | undefined> = ResourceToken<
  DefinedObject<Static<Spec>, Status extends TSchema ? Static<Status> : Record<string, any>>
> & { readonly crd: CrdObject };

const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** The CRDs of the resources defined with defineResource, keyed by token (read by the registry). */
const definitions = new WeakMap<object, KubeObject>();

export function definitionOf(selector: unknown): KubeObject | undefined {
  return typeof selector === "object" && selector !== null ? definitions.get(selector) : undefined;
}

/** One version of a resource with a schema of its own (`defineResource({ versions: { v1: {...} } })`). */
export interface VersionSchema<
  Spec extends TSchema = TSchema, Status extends TSchema | undefined = TSchema | undefined,
> {
  schema: { spec: Spec; status?: Status };
  /** Served by the API server. Default true. */
  served?: boolean;
  /** The version objects are stored in: exactly one version has `storage: true`. */
  storage?: boolean;
  /** Deprecated: true, or the warning the API server sends to clients of this version. */
  deprecated?: boolean | string;
  /** This version's printer columns, instead of the definition's. */
  printerColumns?: readonly PrinterColumn[];
}

/** A resource whose versions each have their own schema; the token is the storage version's. */
export interface VersionedDefinition<V extends Record<string, VersionSchema>>
  extends Omit<ResourceDefinition<TSchema, undefined>, "versions" | "schema"> {
  versions: V;
}

/** Either form defineResource takes. */
type AnyDefinition =
  | ResourceDefinition<TSchema, TSchema | undefined> | VersionedDefinition<Record<string, VersionSchema>>;

type TokenOfVersion<S> = S extends VersionSchema
  ? DefinedToken<S["schema"]["spec"], S["schema"] extends { status?: infer St extends TSchema } ? St : undefined>
  : never;
type StorageOf<V> = { [K in keyof V]: V[K] extends { storage: true } ? K : never }[keyof V];

/** The storage version's token, with a token per version under `versions` (each typed by its own schema). */
export type VersionedToken<V extends Record<string, VersionSchema>> = TokenOfVersion<V[StorageOf<V>]> & {
  readonly versions: { readonly [K in keyof V]: TokenOfVersion<V[K]> };
};

/**
 * Defines a custom resource from a TypeBox schema: a typed token for the handlers, and the CRD
 * (structural schema, printer columns, status subresource) that `kobun manifests` prints and
 * `kobun dev` installs. With `versions: { v1: { schema, storage: true }, ... }`, each version has its own
 * schema.
 */
export function defineResource<Spec extends TSchema, Status extends TSchema | undefined = undefined>(
  definition: ResourceDefinition<Spec, Status>,
): DefinedToken<Spec, Status>;
export function defineResource<const V extends Record<string, VersionSchema>>(
  definition: VersionedDefinition<V>,
): VersionedToken<V>;
export function defineResource(definition: AnyDefinition): unknown {
  const { group, kind, plural } = definition;
  const where = `defineResource(${JSON.stringify(kind)})`;
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/.test(group ?? "")) {
    throw new RegistrationError(`${where}: group must be a DNS subdomain with a dot, like "example.com"`);
  }
  if (!/^[A-Z][A-Za-z0-9]*$/.test(kind ?? "")) {
    throw new RegistrationError(`${where}: kind must be CamelCase, like "KobunExample"`);
  }
  if (!DNS_LABEL.test(plural ?? "")) {
    throw new RegistrationError(`${where}: plural must be lowercase, like "kobunexamples"`);
  }
  const plans = versionPlans(definition, where);
  const crd = crdOf(definition, plans);
  const tokenOf = (version: string) => {
    const token = resource(`${plural}.${group}/${version}`);
    const defined = Object.freeze(Object.defineProperties({ ...token }, {
      crd: { value: crd, enumerable: false },
      toJSON: { value: () => JSON.parse(JSON.stringify(token)), enumerable: false },
    }));
    definitions.set(defined, crd);
    return defined;
  };
  const storage = plans.find((p) => p.storage)!.name;
  const main = tokenOf(storage);
  if (Array.isArray(definition.versions) || definition.versions === undefined) return main;
  const versions = Object.freeze(
    Object.fromEntries(plans.map((p) => [p.name, p.name === storage ? main : tokenOf(p.name)])),
  );
  const versioned = Object.freeze(Object.defineProperties({ ...main }, {
    crd: { value: crd, enumerable: false },
    versions: { value: versions, enumerable: false },
    toJSON: { value: () => (main as unknown as { toJSON(): unknown }).toJSON(), enumerable: false },
  }));
  definitions.set(versioned, crd);
  return versioned;
}

/** The versions to write: the list form (one schema, the first stored) or the map form (a schema each). */
function versionPlans(definition: AnyDefinition, where: string): VersionPlan[] {
  const validName = (v: string) => /^v\d+((alpha|beta)\d+)?$/.test(v);
  if (Array.isArray(definition.versions) || definition.versions === undefined) {
    const d = definition as ResourceDefinition<TSchema, TSchema | undefined>;
    const names = d.versions ?? ["v1"];
    if (names.length === 0 || !names.every(validName)) {
      throw new RegistrationError(`${where}: versions must be like ["v1"] or ["v1", "v1beta1"]`);
    }
    if (d.schema?.spec === undefined) {
      throw new RegistrationError(`${where}: schema.spec is required (a TypeBox schema, e.g. Type.Object({...}))`);
    }
    return names.map((name, i) => ({
      name, served: true, storage: i === 0, schema: d.schema, columns: d.printerColumns,
    }));
  }
  if ("schema" in definition) {
    throw new RegistrationError(
      `${where}: give either schema (one for every version) or a schema in each of versions, not both`,
    );
  }
  const entries = Object.entries(definition.versions);
  if (entries.length === 0 || !entries.every(([name]) => validName(name))) {
    throw new RegistrationError(`${where}: versions must be keyed like { v1: {...}, v1beta1: {...} }`);
  }
  for (const [name, v] of entries) {
    if (v?.schema?.spec === undefined) {
      throw new RegistrationError(`${where}: versions.${name}.schema.spec is required (a TypeBox schema)`);
    }
  }
  const stored = entries.filter(([, v]) => v.storage === true).map(([name]) => name);
  if (stored.length !== 1) {
    const which = stored.length === 0 ? "none has" : `${stored.join(", ")} have`;
    throw new RegistrationError(`${where}: exactly one version must have storage: true (${which})`);
  }
  const plans = entries.map(([name, v]) => ({
    name, served: v.served ?? true, storage: v.storage === true, schema: v.schema,
    columns: v.printerColumns ?? definition.printerColumns, deprecated: v.deprecated,
  }));
  if (plans.some((p) => p.storage && !p.served)) {
    throw new RegistrationError(`${where}: the storage version ${stored[0]} must be served`);
  }
  return plans;
}
