// What `kobun manifests` reads where a running operator would ask the API server: the shipped
// CRD that a resource selector names (for its scope and names), and how many watch streams
// the deployed process may open (for the RBAC that lets it watch namespaces apart).

import { selectorMatches } from "../../declaring/index.ts";
import { fetchSlots, parseSelector, StreamBudget, type KubeObject, type ResourceSelector } from "../../kube/index.ts";

/**
 * The watch streams a Deployment's process may open: Bun's default slots, as the Deployment sets no
 * BUN_CONFIG_MAX_HTTP_REQUESTS.
 */
export const deployedStreamLimit = new StreamBudget(fetchSlots({})).limit;

/**
 * The shipped CRD a selector names, by any name discovery would resolve (plural, singular, kind,
 * short name; the version aside): `kobun manifests` has no API server to ask.
 */
export function crdNamed(crds: readonly KubeObject[], selector: ResourceSelector): KubeObject | undefined {
  const wanted = { ...parseSelector(selector), version: undefined };
  return crds.find((crd) => {
    const names = crd.spec?.names ?? {};
    return typeof names.plural === "string" && selectorMatches(wanted, {
      group: crd.spec?.group ?? "", version: "", plural: names.plural, kind: names.kind ?? "",
      singular: names.singular, shortNames: names.shortNames,
    });
  });
}
