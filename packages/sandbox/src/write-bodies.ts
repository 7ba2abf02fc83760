// The bodies a write would store, before it is checked, owned and stored (objects.ts does
// that): a create's from the request (its name, identity and defaults), an update's from the
// stored object and the request (what PUT and /status may and may not change), a patch's result;
// and the metadata rules among them that need no store.

import { clone, mergePatch, requestJsonPatch } from "./patch.ts";
import { strategicMergePatch } from "./strategic.ts";
import type { ResourceDef } from "./resources.ts";
import { withReadDefaults } from "./schema.ts";
import { applyDefaults } from "./defaults.ts";
import { daemonSetTemplateGeneration, tracksGeneration } from "./generation.ts";
import { errors } from "./status.ts";
import { DECODE, takeStringData } from "./secret-data.ts";
import { goRoundTrip } from "./go-omitempty.ts";

// the name a create asks for (object-names.ts), with the rest of a create's body
export { requestedName } from "./object-names.ts";


export function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function apiVersionOf(def: ResourceDef, version: string): string {
  return def.group ? `${def.group}/${version}` : version;
}

/** a stored body as served at a given version */
export function present(def: ResourceDef, version: string, body: any): any {
  const { kind: _k, apiVersion: _a, ...rest } = withReadDefaults(body, def.schemas?.get(def.storageVersion ?? version));
  return { kind: def.kind, apiVersion: apiVersionOf(def, version), ...rest };
}

/**
 * what a create stores, before validation, ownership and allocation:
 * `meta` is the request's (no namespace left to check)
 */
export function createdBody(
  def: ResourceDef, ns: string, name: string, input: any, meta: any, statusful: boolean,
): any {
  const body: any = takeStringData(def, clone(input), DECODE);
  body.kind = def.kind;
  body.apiVersion = apiVersionOf(def, def.versions[0]!);
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  body.metadata = {
    ...meta, name, ...(def.namespaced ? { namespace: ns } : {}),
    uid: crypto.randomUUID(), creationTimestamp: nowTimestamp(),
    ...(tracksGeneration(def) ? { generation: 1 } : {}),
  };
  if (!def.namespaced) delete body.metadata.namespace;
  goRoundTrip(def, body);
  if (statusful) delete body.status;
  if (def.plural === "namespaces" && !def.group) body.status = { phase: "Active" };
  applyDefaults(def.group, def.plural, body);
  daemonSetTemplateGeneration(def, body);
  return body;
}

/** the metadata a built-in kind's status strategy takes from a /status write; the rest stays as stored */
const STATUS_METADATA = ["labels", "annotations", "finalizers", "ownerReferences"];
/** what a kind's status strategy keeps as stored even so: a Deployment's labels, a Pod's owners (kubelets') */
export const STATUS_KEEPS: Record<string, string[]> = { "apps/deployments": ["labels"], "/pods": ["ownerReferences"] };

/**
 * What /status stores over `old`: the sent status, the spec as stored. A custom resource's metadata stays as
 * stored (its status strategy copies the old object); a built-in kind's status strategy takes the sent labels,
 * annotations, finalizers and owner references (but for what STATUS_KEEPS names), as kube-apiserver does.
 */
function statusBody(def: ResourceDef, old: any, input: any): any {
  const next = clone(old);
  if (input.status === undefined) delete next.status;
  else next.status = clone(input.status);
  const sent = input.metadata ?? {};
  if (!def.crdName) {
    const keeps = STATUS_KEEPS[`${def.group}/${def.plural}`] ?? [];
    for (const field of STATUS_METADATA.filter((f) => !keeps.includes(f))) {
      if (sent[field] === undefined || sent[field] === null) delete next.metadata[field];
      else next.metadata[field] = clone(sent[field]);
    }
    applyDefaults(def.group, def.plural, next);
  }
  // the managedFields the write brings (an apply's) are kept, as the status strategies keep them
  if (sent.managedFields !== undefined) next.metadata.managedFields = clone(sent.managedFields);
  return next;
}

/** what PUT (or /status) stores over `old`, before validation and ownership */
export function updatedBody(
  def: ResourceDef, ns: string, name: string, old: any, input: any, sub: "status" | undefined, statusful: boolean,
): any {
  let next: any;
  if (sub === "status") {
    next = statusBody(def, old, input);
  } else {
    next = takeStringData(def, clone(input), DECODE);
    const m = next.metadata ?? {};
    // like the real server: a write that says nothing of managedFields keeps them
    if (m.managedFields === undefined && old.metadata.managedFields !== undefined) {
      m.managedFields = clone(old.metadata.managedFields);
    }
    next.metadata = {
      ...m, name, uid: old.metadata.uid, creationTimestamp: old.metadata.creationTimestamp,
      resourceVersion: old.metadata.resourceVersion, generation: old.metadata.generation,
    };
    if (def.namespaced) next.metadata.namespace = ns; else delete next.metadata.namespace;
    for (const k of ["deletionTimestamp", "deletionGracePeriodSeconds"]) {
      if (old.metadata[k] !== undefined) next.metadata[k] = old.metadata[k]; else delete next.metadata[k];
    }
    if (statusful) {
      if (old.status === undefined) delete next.status; else next.status = clone(old.status);
    }
    if (def.plural === "namespaces" && !def.group) {
      if (next.status === undefined && old.status) next.status = clone(old.status);
      // PrepareForUpdate: spec.finalizers change only through /finalize (the namespace controller's)
      const { finalizers: _f, ...spec } = next.spec ?? {};
      const kept = old.spec?.finalizers === undefined ? {} : { finalizers: clone(old.spec.finalizers) };
      if (next.spec !== undefined || old.spec !== undefined) next.spec = { ...spec, ...kept };
    }
    applyDefaults(def.group, def.plural, next);
  }
  goRoundTrip(def, next);
  next.kind = def.kind;
  next.apiVersion = old.apiVersion;
  daemonSetTemplateGeneration(def, next, old);
  return next;
}

/** an object being deleted may lose finalizers, never gain one */
export function checkNoNewFinalizers(def: ResourceDef, name: string, old: any, next: any): void {
  if (old.metadata.deletionTimestamp) {
    const had: unknown[] = old.metadata.finalizers ?? [];
    const added = ((next.metadata.finalizers ?? []) as unknown[]).filter((f) => !had.includes(f));
    if (added.length) {
      const found = `[]string{${added.map((f) => JSON.stringify(f)).join(", ")}}`;
      throw errors.invalid(def.group, def.kind, name, "metadata.finalizers",
        `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${found}`);
    }
  }
}

/** the object as the patch would leave it; `current` as served at the request's version */
export function patchedBody(def: ResourceDef, contentType: string, patchBody: unknown, current: any): any {
  let patched: any;
  switch (contentType) {
    case "application/merge-patch+json":
      patched = mergePatch(current, patchBody);
      break;
    case "application/json-patch+json":
      patched = requestJsonPatch(current, patchBody);
      break;
    case "application/strategic-merge-patch+json":
      if (def.crdName) throw errors.unsupportedMediaType(contentType);
      patched = strategicMergePatch(current, patchBody);
      break;
    default:
      throw errors.unsupportedMediaType(contentType);
  }
  if (typeof patched !== "object" || patched === null || Array.isArray(patched)) {
    throw errors.badRequest("the patch did not produce a JSON object");
  }
  patched.metadata ??= {};
  return patched;
}
