// The peering resources and their CRDs, for both groups: `kobun.dev` (kobun's own) and
// `kopf.dev` (so kobun coordinates with Kopf-based operators in the same cluster).
//
// The CRDs match Kopf's `peering.yaml` exactly: a structural schema whose `status` keeps
// unknown fields, and NO status subresource. That last point matters for mixed fleets:
// Kopf writes its records with a merge patch on the main object; if our CRD had a status
// subresource, the API server would silently drop those writes.
//
// The same CRDs ship as YAML in `crds/peering-<group>.yaml`; a test keeps both identical.

import type { KubeObject, Resource } from "../kube/index.ts";

export type PeeringGroup = "kobun.dev" | "kopf.dev" | (string & {});

interface PeeringNames {
  kind: string;
  plural: string;
}

/** `KobunPeering`/`kobunpeerings` for kobun.dev, `KopfPeering`/`kopfpeerings` for kopf.dev (and for other groups). */
function names(group: PeeringGroup, namespaced: boolean): PeeringNames {
  const base = group === "kobun.dev" ? "KobunPeering" : "KopfPeering";
  const kind = namespaced ? base : `Cluster${base}`;
  return { kind, plural: `${kind.toLowerCase()}s` };
}

/** The peering resource: namespaced when the operator serves one namespace, cluster-wide otherwise. */
export function peeringResource(group: PeeringGroup, namespaced: boolean): Resource {
  const { kind, plural } = names(group, namespaced);
  return { group, version: "v1", plural, kind, namespaced, statusSubresource: false };
}

/** The CustomResourceDefinition object for one peering resource. */
export function peeringCRD(group: PeeringGroup, namespaced: boolean): KubeObject {
  const { kind, plural } = names(group, namespaced);
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      scope: namespaced ? "Namespaced" : "Cluster",
      group,
      names: { kind, plural, singular: kind.toLowerCase() },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: { status: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            },
          },
        },
      ],
    },
  };
}

/** Both CRDs of a group: cluster-scoped first, then namespaced (the order of the YAML file). */
export function peeringCRDs(group: PeeringGroup): KubeObject[] {
  return [peeringCRD(group, false), peeringCRD(group, true)];
}

/** An empty peering object to create next to the CRDs (`kubectl apply` it, or let the operator create it). */
export function peeringObject(group: PeeringGroup, name = "default", namespace: string | null = null): KubeObject {
  const resource = peeringResource(group, namespace !== null);
  const metadata: KubeObject["metadata"] = namespace === null ? { name } : { name, namespace };
  return { apiVersion: `${group}/v1`, kind: resource.kind, metadata };
}

/**
 * The CRDs of a group as YAML, byte for byte the content of `crds/peering-<group>.yaml`
 * (for `kobun manifests`). Written by hand rather than by a YAML library so that printing
 * manifests does not load one.
 */
export function peeringCRDsYAML(group: PeeringGroup): string {
  const header = [
    `# Peering CRDs for the ${group} group: operators write their keep-alive records into the`,
    `# status of one object of these kinds (status.<peer id> = {priority, lifetime, lastseen}).`,
    `# No status subresource, exactly like Kopf's own CRDs, so status is written on the main`,
    `# object and mixed fleets of kobun and Kopf operators read and write the same records.`,
  ];
  const docs = peeringCRDs(group).map((crd) => {
    const spec = crd.spec as { scope: string; names: { kind: string; plural: string; singular: string } };
    return [
      "---",
      "apiVersion: apiextensions.k8s.io/v1",
      "kind: CustomResourceDefinition",
      "metadata:",
      `  name: ${crd.metadata.name}`,
      "spec:",
      `  scope: ${spec.scope}`,
      `  group: ${group}`,
      "  names:",
      `    kind: ${spec.names.kind}`,
      `    plural: ${spec.names.plural}`,
      `    singular: ${spec.names.singular}`,
      "  versions:",
      "    - name: v1",
      "      served: true",
      "      storage: true",
      "      schema:",
      "        openAPIV3Schema:",
      "          type: object",
      "          properties:",
      "            status:",
      "              type: object",
      "              x-kubernetes-preserve-unknown-fields: true",
    ];
  });
  return [...header, ...docs.flat()].join("\n") + "\n";
}

/** The coordination.k8s.io Lease resource (lease mode). */
export { leaseResource } from "../kube/index.ts";

/**
 * The CustomResourceDefinition resource, to install the peering CRDs (tests, `kobun dev`).
 * Its discovery may say otherwise on old servers; v1 exists since Kubernetes 1.16.
 */
export const crdResource: Resource = {
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
  kind: "CustomResourceDefinition",
  namespaced: false,
  statusSubresource: true,
};
