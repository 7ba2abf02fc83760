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

/** The size, or a PermanentError: retrying cannot fix a claim without one. */
function sizeOf(spec: { size?: string }): string {
  if (!spec.size) throw new PermanentError(`Size must be set. Got ${JSON.stringify(spec.size)}.`);
  return spec.size;
}

on.create(Claims, async ({ spec, name, adopt, api, logger }) => {
  const claim: KubeObject = {
    apiVersion: "v1", kind: "PersistentVolumeClaim",
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
  await api.patch("v1/persistentvolumeclaims", pvc, { spec: { resources: { requests: { storage: sizeOf(spec) } } } }, { namespace });
}, { id: "update_fn", children: ["persistentvolumeclaims"] });

on.field(Claims, { id: "relabel", field: "metadata.labels", children: ["persistentvolumeclaims"] }, async ({ old, new: labels, status, namespace, api }) => {
  const pvc = status.create_fn?.["pvc-name"];
  if (!pvc) return; // on the creation: create_fn copied the labels already
  // The field's old and new value, not Kopf's {field[0]: new for ... in diff}: a claim that had no
  // labels gets its first ones as one diff item for the whole field (path [], no key to take).
  const removed = Object.fromEntries(Object.keys(old ?? {}).map((key) => [key, null])); // null removes
  await api.patch("v1/persistentvolumeclaims", pvc, { metadata: { labels: { ...removed, ...labels } } }, { namespace });
});
