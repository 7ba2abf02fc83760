// What the real server checks of a body before storing it beyond the metadata rules (objects.ts):
// labels, annotations, owners and finalizers (meta-validation.ts), custom resources by their
// version's structural schema, built-in kinds' unknown fields (refused under fieldValidation=Strict, else
// dropped with a warning),
// immutable ConfigMaps and Secrets, the apps/v1 workloads' selectors and replicas (workload-validation.ts), and the
// legacy Event validation.

import { builtinSchemaName, dropUnknownFields, unknownFields } from "./kube-schemas.ts";
import { addWarning } from "./warnings.ts";
import type { ResourceDef } from "./resources.ts";
import { applySchema, invalidError, prune, strictDecodingError, type Cause } from "./schema.ts";
import { clone, deepEqual } from "./patch.ts";
import { configMapKeyCauses, isSecret, secretKeyCauses } from "./secret-data.ts";
import { metadataCauses } from "./meta-validation.ts";
import { ApiStatusError } from "./status.ts";
import { eventCauses } from "./event-validation.ts";
import { workloadCauses } from "./workload-validation.ts";

const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/**
 * What the real server does to a body before storing it beyond the metadata rules: custom
 * resources are pruned and type-checked by their version's structural schema (schema.ts);
 * Events get the legacy Event validation (the namespace of the involved object); every kind's
 * metadata is checked first (meta-validation.ts). Throws 422.
 */
export function validateWrite(
  def: ResourceDef, version: string, body: any, old?: any, strict = false, quiet = false,
): void {
  const meta = metadataCauses(def, body, old !== undefined);
  // an Event is validated as the stored (core) kind, whichever API wrote it
  const group = def.plural === "events" && def.group === "events.k8s.io" ? "" : def.group;
  try {
    validateKind(def, version, body, old, strict, quiet);
  } catch (e) {
    // the kind's own causes follow the metadata's in one 422
    const causes = e instanceof ApiStatusError && e.code === 422 ? e.details?.causes : undefined;
    if (!meta.length || !causes) throw e;
    throw invalidError(group, def.kind, body.metadata?.name ?? "", [...meta, ...causes as Cause[]]);
  }
  if (meta.length) throw invalidError(group, def.kind, body.metadata?.name ?? "", meta);
}

function validateKind(def: ResourceDef, version: string, body: any, old: any, strict: boolean, quiet: boolean): void {
  if (strict) {
    // fieldValidation=Strict, as the real server's strict decoding words it
    const unknown = strictlyUnknown(def, version, body);
    const said = def.crdName ? String(body?.apiVersion ?? "").split("/").pop() : version;
    if (unknown.length) throw strictDecodingError(def.kind, said, unknown);
  }
  const schema = builtinSchemaName(def.group, version, def.kind);
  if (def.crdName) {
    // its metadata is decoded into ObjectMeta, which drops (and names first) what it does not have
    const unknown = dropUnknownFields(OBJECT_META, body.metadata).map((field) => `metadata.${field}`);
    applySchema(def.schemas?.get(version), def.group, def.kind, body, old, { quiet, unknown });
    return;
  }
  if (schema) {
    // Warn (the default) or Ignore: decoding into the kind's type drops what it does not have
    for (const field of dropUnknownFields(schema, body)) if (!quiet) addWarning(`unknown field "${field}"`);
  }
  if (old !== undefined && def.group === "" && (def.plural === "configmaps" || def.plural === "secrets")) {
    const causes = immutableCauses(def.plural, body, old);
    if (causes.length) throw invalidError("", def.kind, body.metadata?.name ?? "", causes);
  }
  if (isSecret(def) || (def.group === "" && def.plural === "configmaps")) {
    const causes = isSecret(def) ? secretKeyCauses(body) : configMapKeyCauses(body);
    if (causes.length) throw invalidError("", def.kind, body.metadata?.name ?? "", causes);
  }
  const workload = workloadCauses(def, body, old);
  if (workload.length) throw invalidError(def.group, def.kind, body.metadata?.name ?? "", workload);
  if (def.plural === "events" && (def.group === "" || def.group === "events.k8s.io")) {
    const causes = eventCauses(def.group, body, old);
    if (causes.length) throw invalidError("", def.kind, body.metadata?.name ?? "", causes);
  }
}

/**
 * What fieldValidation=Strict refuses of a body, in the real server's order: a built-in kind's unknown fields as its
 * decoding meets them; a custom resource's metadata's, then what its schema would prune, sorted.
 */
export function strictlyUnknown(def: ResourceDef, version: string, body: any): string[] {
  if (!def.crdName) {
    const schema = builtinSchemaName(def.group, version, def.kind);
    return schema ? unknownFields(schema, body) : [];
  }
  const pruned: string[] = [];
  const schema = def.schemas?.get(version);
  if (schema) prune(clone(body), schema, true, pruned);
  return [...unknownFields(OBJECT_META, body?.metadata).map((field) => `metadata.${field}`), ...pruned.sort()];
}

/**
 * ValidateConfigMapUpdate's and ValidateSecretUpdate's rule for an object stored with `immutable: true`: it stays
 * immutable, and its data (a ConfigMap's binaryData too) cannot change.
 */
function immutableCauses(plural: string, next: any, old: any): Cause[] {
  if (old.immutable !== true) return [];
  const forbidden = (field: string): Cause =>
    ({ reason: "FieldValueForbidden", message: "Forbidden: field is immutable when `immutable` is set", field });
  const same = (a: unknown, b: unknown) => deepEqual(a ?? {}, b ?? {});
  const out: Cause[] = [];
  if (next.immutable !== true) out.push(forbidden("immutable"));
  if (!same(next.data, old.data)) out.push(forbidden("data"));
  if (plural === "configmaps" && !same(next.binaryData, old.binaryData)) out.push(forbidden("binaryData"));
  return out;
}
