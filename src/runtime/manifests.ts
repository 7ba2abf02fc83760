// The YAML manifests shipped beside the handlers (CRDs and `*.sample.yaml` objects), and what
// `kobun manifests` derives the rest of a deployment from: the handled resources and the
// peering CRDs. cli/ imports only runtime/ and config/ (test/contracts/rooms.ts), so it takes
// those from here. Kept apart from runtime/dev.ts, which loads the sandbox.

import { parseAllDocuments, stringify } from "yaml";
import { registry, selectorMatches, type Registry } from "../declaring/registry.ts";
import { parseSelector, type ResourceSelector } from "../kube/discovery.ts";
import type { KubeObject } from "../kube/types.ts";
import { fetchSlots, StreamBudget } from "../kube/budget.ts";

export { parseSelector, type ResourceSelector } from "../kube/discovery.ts";
export type { KubeObject } from "../kube/types.ts";
export { peeringCRDs, peeringResource } from "../peering/resources.ts";
export { registry };
export { namespacesWatchedApart } from "../streams/index.ts";

/** The watch streams a Deployment's process may open: Bun's default slots, as the Deployment sets no BUN_CONFIG_MAX_HTTP_REQUESTS. */
export const deployedStreamLimit = new StreamBudget(fetchSlots({})).limit;

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

export { crdConversion, crdName, webhookConfigurations, PLURALS, ADMISSION_GROUP, type RuleTarget } from "../admission/index.ts";
export type { Registry, WebhookSpec } from "../declaring/registry.ts";

/**
 * The manifests plus the CRDs of the resources defined in code (defineResource) that handlers
 * were registered for, unless a YAML file beside the handlers already defines that CRD.
 */
export function withDefinitions(manifests: Manifest[], from: Registry = registry): Manifest[] {
  const shipped = new Set(manifestObjects(manifests, "definitions").map((o) => o.metadata?.name));
  const defined = from.definitions().filter((crd) => !shipped.has(crd.metadata.name));
  return [...manifests, ...defined.map((crd) => ({ name: `${crd.metadata.name}.crd.yaml`, text: stringify(crd) }))];
}

/**
 * The shipped CRD a selector names, by any name discovery would resolve (plural, singular, kind,
 * short name; the version aside): `kobun manifests` has no API server to ask.
 */
export function crdNamed(crds: readonly KubeObject[], selector: ResourceSelector): KubeObject | undefined {
  const wanted = { ...parseSelector(selector), version: undefined };
  return crds.find((crd) => {
    const names = crd.spec?.names ?? {};
    return typeof names.plural === "string" && selectorMatches(wanted, {
      group: crd.spec?.group ?? "", version: "", plural: names.plural, kind: names.kind ?? "", singular: names.singular, shortNames: names.shortNames,
    });
  });
}
