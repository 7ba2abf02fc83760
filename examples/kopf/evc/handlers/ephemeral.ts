// The operator of Kopf's walkthrough (docs/walkthrough/*.rst), ported: an EphemeralVolumeClaim
// makes a PersistentVolumeClaim of the same name and size, owned by it (so it goes when the claim
// goes), resizes it when the claim's size changes, and keeps its labels equal to the claim's.
// docs/from-kopf.md walks through the migration, handler by handler.
import { defineResource, PermanentError, Registry, type KubeObject } from "kobun";
import Type from "typebox";

export const registry = new Registry();
const { on } = registry;

export const Claims = defineResource({
  group: "kopf.dev", kind: "EphemeralVolumeClaim", plural: "ephemeralvolumeclaims", shortNames: ["evcs", "evc"],
  schema: {
    spec: Type.Object({ size: Type.Optional(Type.String()) }),
    status: Type.Object({ create_fn: Type.Optional(Type.Object({ "pvc-name": Type.String() })) }),
  },
});

/**
 * The child's kind. A test seam: kobun's sandbox serves no PersistentVolumeClaims, so the test
 * points this at a stand-in CRD of the same shape (test/pvc-stand-in.yaml).
 */
export const child = { apiVersion: "v1", kind: "PersistentVolumeClaim", resource: "v1/persistentvolumeclaims" };

/** The size, or a PermanentError: retrying cannot fix a claim without one. */
function sizeOf(spec: { size?: string }): string {
  if (!spec.size) throw new PermanentError(`Size must be set. Got ${JSON.stringify(spec.size)}.`);
  return spec.size;
}

on.create(Claims, async ({ spec, name, adopt, api, logger }) => {
  const claim: KubeObject = {
    apiVersion: child.apiVersion, kind: child.kind,
    metadata: { name, annotations: { "volume.beta.kubernetes.io/storage-class": "standard" } },
    spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: sizeOf(spec) } } },
  };
  const made = await api.create(adopt(claim)); // owned by the claim (ctx.adopt), its labels copied
  logger.info("PVC child is created", { pvc: made.metadata.name });
  return { "pvc-name": made.metadata.name! };
}, { id: "create_fn", children: ["persistentvolumeclaims"] });

on.update(Claims, async ({ spec, status, namespace, api }) => {
  const pvc = status.create_fn?.["pvc-name"];
  if (!pvc) throw new PermanentError("the claim has no PVC: its creation failed");
  await api.patch(child.resource, pvc, { spec: { resources: { requests: { storage: sizeOf(spec) } } } }, { namespace });
}, { id: "update_fn", children: ["persistentvolumeclaims"] });

on.field(Claims, { id: "relabel", field: "metadata.labels", children: ["persistentvolumeclaims"] }, async ({ diff, status, namespace, api }) => {
  const pvc = status.create_fn?.["pvc-name"];
  if (!pvc) return; // on the creation: create_fn copied the labels already
  const labels = Object.fromEntries(diff.map(({ path, new: now }) => [path[0], now ?? null])); // null removes
  await api.patch(child.resource, pvc, { metadata: { labels } }, { namespace });
});
