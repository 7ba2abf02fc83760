// The shapes every room shares when it talks about Kubernetes objects and resources.
// Kept free of behaviour so that any room may import it.

/** An object's `metadata` (metav1.ObjectMeta): the fields kobun reads, the rest kept open. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Record<string, unknown>[];
  [key: string]: unknown;
}

/** Any Kubernetes object. `spec`/`status` are left open: handlers read what their CRD defines. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: Record<string, any>;
  status?: Record<string, any>;
  [key: string]: any;
}

export interface ObjectList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** The Status object the API server sends with every failure (and in watch ERROR events). */
export interface Status {
  kind: "Status";
  apiVersion?: string;
  metadata?: Record<string, unknown>;
  status?: "Success" | "Failure";
  message?: string;
  reason?: string;
  details?: { name?: string; group?: string; kind?: string; causes?: unknown[]; retryAfterSeconds?: number };
  code?: number;
}

/** A resource as the API server serves it: enough to build every URL for it. */
export interface Resource {
  /** "" for the core group. */
  group: string;
  version: string;
  plural: string;
  kind: string;
  /** The other names discovery gives it (kubectl accepts them): selectors written with them match it too. */
  singular?: string;
  shortNames?: readonly string[];
  namespaced: boolean;
  /** Whether `/status` is a subresource (then status writes must go there). */
  statusSubresource: boolean;
  verbs?: string[];
}

/** `apps/v1` or `v1` for the core group. */
/** An apiVersion's group ("" for the core group) and version: "apps/v1" → apps, v1; "v1" → "", v1. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf("/");
  if (slash < 0) return { group: "", version: apiVersion };
  return { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function apiVersionOf(resource: Pick<Resource, "group" | "version">): string {
  return resource.group ? `${resource.group}/${resource.version}` : resource.version;
}

/** `plural.group` (or just `plural` for core): the name people and RBAC use. */
export function resourceName(resource: Pick<Resource, "group" | "plural">): string {
  return resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
}

/** The URL path of a resource collection, object, or subresource. */
export function resourcePath(
  resource: Pick<Resource, "group" | "version" | "plural" | "namespaced">,
  namespace?: string | null,
  name?: string,
  subresource?: string,
): string {
  let path = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
  if (resource.namespaced && namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
  path += `/${resource.plural}`;
  if (name !== undefined) path += `/${encodeURIComponent(name)}`;
  if (subresource) path += `/${subresource}`;
  return path;
}

export type PatchType = "merge" | "json" | "strategic" | "apply";

export const patchContentTypes: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
  // Server-side apply: the body is YAML, and JSON is YAML.
  apply: "application/apply-patch+yaml",
};

/** One raw event from a watch stream, before interpretation. */
export interface RawWatchEvent {
  type: string;
  object: KubeObject | Status;
}
