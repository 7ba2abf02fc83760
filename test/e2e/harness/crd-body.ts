// A CustomResourceDefinition's body for tests: a namespaced kind served in `versions` (the first
// stores unless `storage` names another), any field kept, optionally a status subresource and
// short names. Shared by the e2e suite and unit tests that need a CRD of a given shape.

export function crdBody(
  group: string, plural: string, kind: string, versions: readonly string[] = ["v1"],
  o: { storage?: string; status?: boolean; shortNames?: string[] } = {},
) {
  const storage = o.storage ?? versions[0];
  const names = { plural, kind, singular: kind.toLowerCase(), ...(o.shortNames ? { shortNames: o.shortNames } : {}) };
  const served = versions.map((name) => ({
    name, served: true, storage: name === storage,
    ...(o.status ? { subresources: { status: {} } } : {}),
    schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
  }));
  const metadata = { name: `${plural}.${group}` };
  return { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata, spec: { group, scope: "Namespaced", names, versions: served } };
}
