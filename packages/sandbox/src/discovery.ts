// Discovery documents: /api, /api/v1, /apis, /apis/{group}, /apis/{group}/{version}, /version.
// Shapes follow meta/v1 APIVersions, APIGroupList, APIGroup and APIResourceList.

import type { ResourceDef, ResourceRegistry } from "./resources.ts";
import { scalePaths } from "./scale.ts";

/** the Kubernetes release whose API the sandbox follows (kubectl warns on a skew of more than one minor) */
export const SERVED_VERSION = { major: "1", minor: "37", patch: "2" };

/**
 * kube-apiserver's order of its groups (their APIService priorities, highest first) among those served here; the
 * groups of CRDs (priority 1000) come after, by name
 */
const GROUP_ORDER = [
  "apps", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io", "autoscaling", "batch",
  "networking.k8s.io", "policy", "rbac.authorization.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io",
  "coordination.k8s.io",
];
const rank = (group: string) => (GROUP_ORDER.includes(group) ? GROUP_ORDER.indexOf(group) : GROUP_ORDER.length);

/** the groups as discovery lists them (`kubectl get all` prints its kinds in this order) */
export function groupsInOrder(reg: ResourceRegistry): [string, string[]][] {
  return [...reg.groups()].sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** a group version's resources as discovery lists them: by name */
export function resourcesInOrder(reg: ResourceRegistry, group: string, version: string): ResourceDef[] {
  return reg.all().filter((d) => d.group === group && d.versions.includes(version))
    .sort((a, b) => (a.plural < b.plural ? -1 : a.plural > b.plural ? 1 : 0));
}

export function apiVersions(): unknown {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "127.0.0.1" }],
  };
}

function groupDoc(group: string, versions: string[]): unknown {
  const gv = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { name: group, versions: gv, preferredVersion: gv[0] };
}

export function apiGroupList(reg: ResourceRegistry): unknown {
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: groupsInOrder(reg).map(([g, vs]) => groupDoc(g, vs)),
  };
}

export function apiGroup(reg: ResourceRegistry, group: string): unknown | undefined {
  const vs = reg.groups().get(group);
  return vs ? { kind: "APIGroup", apiVersion: "v1", ...(groupDoc(group, vs) as object) } : undefined;
}

/** APIResourceList for one group/version, or undefined when nothing is served there */
export function apiResourceList(reg: ResourceRegistry, group: string, version: string): unknown | undefined {
  const defs = resourcesInOrder(reg, group, version);
  if (!defs.length) return undefined;
  const resources: unknown[] = [];
  for (const d of defs) {
    resources.push({
      name: d.plural, singularName: d.singular, namespaced: d.namespaced, kind: d.kind, verbs: d.verbs,
      ...(d.shortNames.length ? { shortNames: d.shortNames } : {}),
      ...(d.categories.length ? { categories: d.categories } : {}),
    });
    if (scalePaths(d, version)) {
      resources.push({
        name: `${d.plural}/scale`, singularName: "", namespaced: d.namespaced,
        group: "autoscaling", version: "v1", kind: "Scale", verbs: ["get", "patch", "update"],
      });
    }
    if (d.statusVersions.has(version)) {
      resources.push({
        name: `${d.plural}/status`, singularName: "", namespaced: d.namespaced,
        kind: d.kind, verbs: ["get", "patch", "update"],
      });
    }
  }
  const groupVersion = group ? `${group}/${version}` : version;
  return { kind: "APIResourceList", apiVersion: "v1", groupVersion, resources };
}

export function versionInfo(): unknown {
  return {
    major: SERVED_VERSION.major, minor: SERVED_VERSION.minor,
    gitVersion: `v${SERVED_VERSION.major}.${SERVED_VERSION.minor}.${SERVED_VERSION.patch}-kobun-sandbox`,
    gitCommit: "0000000000000000000000000000000000000000",
    gitTreeState: "clean", buildDate: "2026-10-27T00:00:00Z", goVersion: `bun${Bun.version}`, compiler: "bun",
    platform: `${process.platform}/${process.arch}`,
  };
}
