// What a write's request must satisfy before anything is written, each refusal worded as
// kube-apiserver words it: the body a JSON object of the kind served, its name and namespace
// those of the URL, its resourceVersion and uid those stored (a PUT's object, a DELETE's
// preconditions), and a DELETE's propagationPolicy one the server knows. objects.ts asks.

import { FOREGROUND, ORPHAN } from "./gc.ts";
import type { ResourceDef } from "./resources.ts";
import { ApiStatusError, errors } from "./status.ts";

/** A write's body is a JSON object, before anything else is looked at. */
export function checkObjectBody(input: unknown): void {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw errors.badRequest("the body of the request must be a JSON object");
  }
}

function checkKind(def: ResourceDef, input: any): void {
  if (input.kind !== undefined && input.kind !== def.kind) {
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
  if (inMeta.name !== undefined && inMeta.name !== name) {
    throw errors.badRequest(`the name of the object (${inMeta.name}) does not match the name on the URL (${name})`);
  }
  checkKind(def, input);
  const rv = inMeta.resourceVersion;
  if (rv !== undefined && rv !== "" && rv !== old.metadata.resourceVersion) {
    throw errors.conflict(def.group, def.plural, name);
  }
  if (inMeta.uid !== undefined && inMeta.uid !== "" && inMeta.uid !== old.metadata.uid) {
    throw errors.conflict(def.group, def.plural, name, uidMismatch(inMeta.uid, old.metadata.uid));
  }
}

/**
 * A DELETE's preconditions and propagationPolicy against the stored `obj`; the garbage collector's
 * finalizer the policy asks for (gc.ts: dependents deleted first, or orphaned), if any.
 */
export function checkDeleteOptions(def: ResourceDef, name: string, obj: any, options: any): string | undefined {
  const pre = options?.preconditions ?? {};
  if (pre.uid && pre.uid !== obj.metadata.uid) {
    throw errors.conflict(def.group, def.plural, name, uidMismatch(pre.uid, obj.metadata.uid));
  }
  if (pre.resourceVersion && pre.resourceVersion !== obj.metadata.resourceVersion) {
    throw errors.conflict(def.group, def.plural, name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ` +
      `ResourceVersion in object meta: ${obj.metadata.resourceVersion}`);
  }
  const policy = options?.propagationPolicy;
  if (policy !== undefined && policy !== "Foreground" && policy !== "Background" && policy !== "Orphan") {
    throw errors.invalid("meta.k8s.io", "DeleteOptions.meta.k8s.io", "", "propagationPolicy",
      `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`);
  }
  return policy === "Foreground" ? FOREGROUND : policy === "Orphan" ? ORPHAN : undefined;
}

const uidMismatch = (wanted: unknown, stored: unknown) =>
  `Precondition failed: UID in precondition: ${wanted}, UID in object meta: ${stored}`;
