// The YAML manifests shipped beside the handlers (CRDs and `*.sample.yaml` objects), with the
// CRDs of the resources defined in code added: what `kobun dev`, `kobun manifests` and the test
// kit install or print. Kept apart from runtime/dev.ts, which loads the sandbox.

import { parseAllDocuments, stringify } from "yaml";
import { registry, type Registry } from "../declaring/index.ts";
import type { KubeObject } from "../kube/index.ts";

/** A YAML file found beside the handlers (or embedded into the binary by build.ts). */
export interface Manifest {
  name: string;
  text: string;
}

/** The objects the manifests hold: the samples, or the definitions (everything else: CRDs). */
export function manifestObjects(manifests: Manifest[], which: "samples" | "definitions"): KubeObject[] {
  return manifests
    .filter((m) => /\.sample\.ya?ml$/.test(m.name) === (which === "samples"))
    .flatMap((m) => parseAllDocuments(m.text).map((doc) => doc.toJS() as KubeObject | null))
    .filter((o): o is KubeObject => o !== null && typeof o === "object");
}

/**
 * The CRDs among the manifests: what tells kobun.yaml's resource keys a resource's kind, singular
 * and short names (`kobun manifests` and `run({ crds })` read the same).
 */
export function manifestCRDs(manifests: Manifest[]): KubeObject[] {
  return manifestObjects(manifests, "definitions").filter((o) => o.kind === "CustomResourceDefinition");
}

/**
 * The manifests plus the CRDs of the resources defined in code (defineResource) that handlers
 * were registered for, unless a YAML file beside the handlers already defines that CRD.
 */
export function withDefinitions(manifests: Manifest[], from: Registry = registry): Manifest[] {
  const shipped = new Set(manifestObjects(manifests, "definitions").map((o) => o.metadata?.name));
  const defined = from.definitions().filter((crd) => !shipped.has(crd.metadata.name));
  return [...manifests, ...defined.map((crd) => ({ name: `${crd.metadata.name}.crd.yaml`, text: stringify(crd) }))];
}
