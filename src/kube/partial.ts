// Metadata-only reads: what to ask kube-apiserver for, and what it answers. A LIST must ask for
// PartialObjectMetadataList and a WATCH (or GET) for PartialObjectMetadata (the other one is
// 406, or a watch that ends at its first event); each object comes back as
// { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata }.

import { apiVersionOf, type KubeObject, type Resource } from "./types.ts";

export const METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
export const METADATA_OBJECT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

/**
 * The object as the resource's own kind, with only its metadata: Events, owner references and
 * messages name the real kind, not PartialObjectMetadata. Also cuts a full answer (a PATCH's)
 * down to what a metadata-only watch would have given.
 */
export function metadataOf(object: KubeObject, resource: Resource): KubeObject {
  return { apiVersion: apiVersionOf(resource), kind: resource.kind, metadata: object.metadata };
}
