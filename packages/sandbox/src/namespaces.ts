// Namespaces as kube-apiserver and kube-controller-manager's namespace controller keep them: a
// new Namespace is labelled `kubernetes.io/metadata.name` (defaults.ts) and gets the spec
// finalizer "kubernetes" (kept on every update: only the controller's /finalize drops it); no new
// content in a terminating one, no deletion of default, kube-system and kube-public (403s,
// NamespaceLifecycle's words); and once a terminating
// namespace is empty, the controller drops its finalizer, and the namespace goes when no
// finalizer is left. objects.ts calls these.

import type { Objects } from "./objects.ts";
import { clone } from "./patch.ts";
import { resourceKey, type ResourceDef } from "./resources.ts";
import { ApiStatusError, errors } from "./status.ts";

/** the spec finalizer of the namespace controller */
export const NAMESPACE_FINALIZER = "kubernetes";

export function isNamespaces(def: ResourceDef): boolean {
  return def.plural === "namespaces" && !def.group;
}

/** the spec finalizers a namespace still has */
export function specFinalizers(ns: any): string[] {
  return Array.isArray(ns?.spec?.finalizers) ? ns.spec.finalizers : [];
}

/** the namespaces NamespaceLifecycle never lets go (kube-node-lease may go: the server makes it again) */
const IMMORTAL = new Set(["default", "kube-system", "kube-public"]);

/** A DELETE of a Namespace: refused (403) for the immortal ones, by NamespaceLifecycle before anything is looked up */
export function checkNamespaceDeletable(def: ResourceDef, name: string): void {
  if (!isNamespaces(def) || !IMMORTAL.has(name)) return;
  throw new ApiStatusError(403, "Forbidden", `namespaces "${name}" is forbidden: this namespace may not be deleted`,
    { name, kind: "namespaces" });
}

/** A create in `ns`: the namespace must exist and not be terminating (NamespaceLifecycle). */
export function checkNamespaceOpen(objects: Objects, def: ResourceDef, ns: string, name: string): void {
  if (!def.namespaced) return;
  const nsObj = objects.store.get(resourceKey("", "namespaces"), "", ns);
  if (!nsObj) throw errors.namespaceNotFound(ns);
  if (!nsObj.metadata.deletionTimestamp) return;
  const why = `unable to create new content in namespace ${ns} because it is being terminated`;
  const cause = { reason: "NamespaceTerminating", message: `namespace ${ns} is being terminated`,
    field: "metadata.namespace" };
  throw new ApiStatusError(403, "Forbidden", `${def.plural} "${name}" is forbidden: ${why}`,
    { ...(name ? { name } : {}), group: def.group, kind: def.plural, causes: [cause] });
}

/** The namespace controller's first step: everything in the namespace deleted. */
export function cascadeNamespace(objects: Objects, ns: string): void {
  for (const d of objects.registry.all()) {
    if (!d.namespaced) continue;
    for (const { body } of objects.store.list(resourceKey(d.group, d.plural), ns)) {
      try { objects.delete(d, ns, body.metadata.name, undefined); } catch { /* already gone */ }
    }
  }
}

/**
 * A terminating namespace once it is empty: the controller drops its spec finalizer (the namespace is deleted by
 * that update when no finalizer is left, as the registry's ShouldDeleteNamespaceDuringUpdate does).
 */
export function collectNamespace(objects: Objects, ns: string): void {
  const { store, registry } = objects;
  const key = resourceKey("", "namespaces");
  const nsObj = store.get(key, "", ns);
  if (!nsObj?.metadata.deletionTimestamp) return;
  if (registry.all().some((d) => d.namespaced && store.count(resourceKey(d.group, d.plural), ns) > 0)) return;
  const finalizers = specFinalizers(nsObj);
  const left = finalizers.filter((f) => f !== NAMESPACE_FINALIZER);
  const gone = !left.length && !(nsObj.metadata.finalizers ?? []).length;
  if (!gone && left.length === finalizers.length) return; // held by another's finalizer
  const next = clone(nsObj);
  if (left.length) next.spec.finalizers = left; else if (next.spec) delete next.spec.finalizers;
  next.metadata.resourceVersion = String(store.nextRV());
  if (gone) store.remove(key, "", ns, next); else store.put(key, "", ns, next, "MODIFIED", nsObj);
}
