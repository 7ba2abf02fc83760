// What every object a watch decodes goes through before it is kept (caching/) or handed on.
// It loses `metadata.managedFields` on the way: the API server's field-ownership records are often
// larger than the rest of a small object, no part of an operator reads them, and kept per known
// object they were most of the memory it costs (issue 15). A handler that needs them reads the
// object from the server. A watch line's are cut from its text before it is parsed
// (kube/managed-fields.ts); `slim` drops what that left (LIST pages, text the cut does not apply to).

import { apiVersionOf, type KubeObject, type Resource } from "../kube/index.ts";

/** Drops what no consumer reads from a freshly decoded object (ours alone: it is changed in place). */
export function slim(object: KubeObject): KubeObject {
  if (object.metadata?.managedFields !== undefined) delete object.metadata.managedFields;
  return object;
}

/**
 * A real API server sends LIST items of built-in kinds without apiVersion/kind (only watch
 * events carry them): fill them in, so handlers, Events' involvedObject and the rule "never
 * post about Event objects" see the same body whichever way it arrived. A metadata-only
 * (`partial`) object comes as PartialObjectMetadata: it gets the resource's own too.
 */
export function typed(object: KubeObject, resource: Resource, partial?: boolean): KubeObject {
  if (!object.kind || partial) {
    object.apiVersion = apiVersionOf(resource);
    object.kind = resource.kind;
  }
  return object;
}

/** Both, as every object the watch hands on gets them. */
export function decoded(object: KubeObject, resource: Resource, partial?: boolean): KubeObject {
  return slim(typed(object, resource, partial));
}
