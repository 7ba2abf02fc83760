// What a write's request must satisfy before anything is written, each refusal worded as
// kube-apiserver words it: the body a JSON object of the kind served, its name and namespace
// those of the URL, its resourceVersion and uid those stored (a PUT's object, a DELETE's
// preconditions). objects.ts asks.

import type { ResourceDef } from "./resources.ts";
import { ApiStatusError, errors, qualified } from "./status.ts";

/** the built-in kinds whose strategy refuses an update naming no resourceVersion (AllowUnconditionalUpdate) */
const CONDITIONAL_UPDATES = new Set([
  "apiextensions.k8s.io/customresourcedefinitions", "coordination.k8s.io/leases", "policy/poddisruptionbudgets",
  "admissionregistration.k8s.io/validatingwebhookconfigurations",
  "admissionregistration.k8s.io/mutatingwebhookconfigurations",
]);

/** Custom resources and the kinds above refuse an update that names no resourceVersion; the other built-ins take it. */
function allowsUnconditionalUpdate(def: ResourceDef): boolean {
  return !def.crdName && !CONDITIONAL_UPDATES.has(`${def.group}/${def.plural}`);
}

/** the built-in kinds whose strategy lets a PUT of a missing object create it (AllowCreateOnUpdate) */
const CREATES_ON_UPDATE = new Set([
  "/events", "events.k8s.io/events", "/services", "coordination.k8s.io/leases", "rbac.authorization.k8s.io/roles",
  "rbac.authorization.k8s.io/rolebindings", "rbac.authorization.k8s.io/clusterroles",
  "rbac.authorization.k8s.io/clusterrolebindings",
]);

/** whether a PUT of a missing object of this kind creates it (201), rather than answering 404 */
export function createsOnUpdate(def: ResourceDef): boolean {
  return !def.crdName && CREATES_ON_UPDATE.has(`${def.group}/${def.plural}`);
}

/** A write's body is a JSON object, before anything else is looked at. */
export function checkObjectBody(input: unknown): void {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw errors.badRequest("the body of the request must be a JSON object");
  }
}

function checkKind(def: ResourceDef, input: any): void {
  if (input.kind !== undefined && input.kind !== "" && input.kind !== def.kind) {
    throw errors.badRequest(`the kind of the object (${input.kind}) does not match the kind served here (${def.kind})`);
  }
}

/** A create's body: an object of the kind served, in the request's namespace. */
export function checkCreateBody(def: ResourceDef, ns: string, input: any): void {
  checkObjectBody(input);
  checkKind(def, input);
  if (def.namespaced) {
    const namespace = input.metadata?.namespace;
    if (namespace && namespace !== ns) {
      throw errors.badRequest("the namespace of the provided object does not match the namespace sent on the request");
    }
  }
}

/** A create names no resourceVersion (checked after its name, as there). */
export function checkNoResourceVersion(meta: any): void {
  if (meta.resourceVersion) {
    throw new ApiStatusError(500, "InternalError", "resourceVersion should not be set on objects to be created", {});
  }
}

/** A PUT's object (already checked to be one) against the stored `old`: name, kind, resourceVersion and uid. */
export function checkUpdateBody(def: ResourceDef, name: string, input: any, old: any): void {
  const inMeta = input.metadata ?? {};
  checkUrlName(name, inMeta);
  checkKind(def, input);
  const rv = inMeta.resourceVersion;
  if (rv !== undefined && rv !== "" && rv !== old.metadata.resourceVersion) {
    throw errors.conflict(def.group, def.plural, name);
  }
  if (inMeta.uid !== undefined && inMeta.uid !== "" && inMeta.uid !== old.metadata.uid) {
    throw errors.conflict(def.group, def.plural, name, uidMismatch(inMeta.uid, old.metadata.uid));
  }
  if ((rv === undefined || rv === "") && !allowsUnconditionalUpdate(def)) {
    // the generic store's refusal (after the uid precondition), naming the resource in the kind's place
    const detail = "Invalid value: 0: must be specified for an update";
    throw new ApiStatusError(422, "Invalid", `${qualified(def.group, def.plural)} "${name}" is invalid: ` +
      `metadata.resourceVersion: ${detail}`, { name, group: def.group, kind: def.plural,
      causes: [{ reason: "FieldValueInvalid", message: detail, field: "metadata.resourceVersion" }] });
  }
}

function checkUrlName(name: string, meta: any): void {
  if (meta.name !== undefined && meta.name !== name) {
    throw errors.badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
  }
}

/** A PUT's object that creates (createsOnUpdate): named as the URL (else 400), its resourceVersion not looked at. */
export function createdOnUpdate(name: string, input: any): any {
  checkObjectBody(input);
  const { resourceVersion: _rv, ...meta } = input.metadata ?? {};
  checkUrlName(name, meta);
  return { ...input, metadata: { ...meta, name } };
}

/** A DELETE's preconditions against the stored `obj` (its options are delete-options.ts's). */
export function checkDeletePreconditions(def: ResourceDef, name: string, obj: any, options: any): void {
  const pre = options?.preconditions ?? {};
  const { uid, resourceVersion } = obj.metadata;
  // A Namespace's own delete checks them in the storage layer's words, on its resource; every other kind's
  // (rest.BeforeDelete) names its kind, in the group.
  const namespace = def.plural === "namespaces" && !def.group;
  const failed = (why: string) => namespace
    ? errors.conflict(def.group, def.plural, name, `Precondition failed: ${why}`)
    : errors.conflict(def.group, def.kind, name, why);
  if (pre.uid && pre.uid !== uid) {
    throw failed(namespace ? `UID in precondition: ${pre.uid}, UID in object meta: ${uid}`
      : `the UID in the precondition (${pre.uid}) does not match the UID in record (${uid}). ` +
        "The object might have been deleted and then recreated");
  }
  if (pre.resourceVersion && pre.resourceVersion !== resourceVersion) {
    throw failed(namespace
      ? `ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${resourceVersion}`
      : `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in ` +
        `record (${resourceVersion}). The object might have been modified`);
  }
}

const uidMismatch = (wanted: unknown, stored: unknown) =>
  `Precondition failed: UID in precondition: ${wanted}, UID in object meta: ${stored}`;
