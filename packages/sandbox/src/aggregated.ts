// Aggregated discovery (`Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`
// on /api and /apis): every group, version and resource in one document, as kubectl v1.37 asks
// for it first, instead of one request per group-version.

import type { ResourceDef, ResourceRegistry } from "./resources.ts";
import { scalePaths } from "./scale.ts";
import { groupsInOrder, resourcesInOrder } from "./discovery.ts";

export const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/** whether the client asked for aggregated discovery v2 before the legacy documents */
export function wantsAggregated(accept: string | null): boolean {
  for (const part of (accept ?? "").split(",")) {
    const [type, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    const p = new Map(params.map((kv) => kv.split("=") as [string, string]));
    const v2 = p.get("g") === "apidiscovery.k8s.io" && p.get("as") === "apigroupdiscoverylist" && p.get("v") === "v2";
    if (v2) return true;
    if ((type === "application/json" && !p.has("g")) || type === "*/*") return false;
  }
  return false;
}

function resourceEntry(d: ResourceDef, version: string): unknown {
  const kind = { group: d.group, version, kind: d.kind };
  const subresources: unknown[] = [];
  const verbs = ["get", "patch", "update"];
  if (scalePaths(d, version)) {
    const responseKind = { group: "autoscaling", version: "v1", kind: "Scale" };
    subresources.push({ subresource: "scale", responseKind, verbs });
  }
  if (d.statusVersions.has(version)) subresources.push({ subresource: "status", responseKind: kind, verbs });
  return {
    resource: d.plural, responseKind: kind, scope: d.namespaced ? "Namespaced" : "Cluster",
    singularResource: d.singular, verbs: d.verbs,
    ...(d.shortNames.length ? { shortNames: d.shortNames } : {}),
    ...(d.categories.length ? { categories: d.categories } : {}),
    ...(subresources.length ? { subresources } : {}),
  };
}

/** the APIGroupDiscoveryList of /api (`legacy`: the core group only) or of /apis (every named group) */
export function aggregatedDiscovery(reg: ResourceRegistry, legacy: boolean): unknown {
  const groups: [string, string[]][] = legacy ? [["", ["v1"]]] : groupsInOrder(reg);
  const items = groups.map(([group, versions]) => ({
    metadata: { name: group, creationTimestamp: null },
    versions: versions.map((version) => ({
      version,
      resources: resourcesInOrder(reg, group, version).map((d) => resourceEntry(d, version)),
      freshness: "Current",
    })),
  }));
  return { kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2", metadata: {}, items };
}
