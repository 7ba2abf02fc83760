// The RBAC that `kobun manifests` emits: exactly what `kobun run` with the same settings
// requests, granted where it requests it. Three places:
//   - the served namespaces: handled namespaced resources, their Events, per-namespace peering;
//   - the cluster: cluster-scoped handled resources, cluster-wide peering, and, when the
//     operator watches cluster-wide (-A, only exclusions, globs, more fixed namespaces than
//     watching.clusterWideAbove, or fewer: runtime/coverage.ts), everything above too; with
//     globs, list/watch of Namespaces;
//   - the operator's own namespace: the Lease (lease mode keeps it in $POD_NAMESPACE).
// A Role cannot name a glob as its namespace, nor grant a cluster-scoped resource, so those
// always go to a ClusterRole.

import { fixedNamespaces, type Settings } from "../config/index.ts";
import { deployedStreamLimit, namespacesWatchedApart, parseSelector, peeringResource, type KubeObject, type ResourceSelector } from "../runtime/manifests.ts";

export interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  /** Only these objects (the operator's own webhook configurations and CRDs). */
  resourceNames?: string[];
}

export interface RbacRules {
  /** Granted in every served namespace (a Role each), or cluster-wide when they are not a fixed list. */
  namespaced: Rule[];
  /** Granted cluster-wide (a ClusterRole) in every case. */
  cluster: Rule[];
  /** Granted in the operator's own namespace only. */
  own: Rule[];
  /** Handled resources by scope: how many watch streams the operator opens (roleNamespaces). */
  resources: { namespaced: number; clusterScoped: number };
}

export interface RbacInput {
  settings: Settings;
  selectors: ResourceSelector[];
  /** The CRDs shipped beside the handlers: they tell a resource's group and scope. */
  crds: KubeObject[];
  /** The resources handlers declared as children (`{ children: [...] }`): full access, where the handled objects are. */
  children?: ResourceSelector[];
  /** Of `selectors`, those only indexes read (`on.index`): get/list/watch, never patch. */
  watched?: ResourceSelector[];
}

/** The rules the operator needs, by where it needs them: no more than its handlers, peering and events require. */
export function rbacRules({ settings, selectors, crds, children = [], watched = [] }: RbacInput): RbacRules {
  const rules: RbacRules = { namespaced: [], cluster: [], own: [], resources: { namespaced: 0, clusterScoped: 0 } };
  const placed = (selector: ResourceSelector) => {
    const wanted = parseSelector(selector);
    const crd = crds.find((c) => c.spec?.names?.plural === wanted.name && (wanted.group === undefined || c.spec?.group === wanted.group));
    const group = wanted.group ?? (crd?.spec?.group as string | undefined) ?? "";
    // Built-in resources without a CRD here are taken as namespaced (most are).
    const clusterScoped = crd?.spec?.scope === "Cluster";
    return { wanted, group, clusterScoped, where: clusterScoped ? rules.cluster : rules.namespaced };
  };
  for (const selector of selectors) {
    const { wanted, group, clusterScoped, where } = placed(selector);
    rules.resources[clusterScoped ? "clusterScoped" : "namespaced"]++;
    if (watched.includes(selector)) {
      // Only an index reads it: listed and watched, never written.
      where.push({ apiGroups: [group], resources: [wanted.name], verbs: ["get", "list", "watch"] });
      continue;
    }
    // The engine only reads, watches and merge-patches (results, progress, finalizers).
    where.push({ apiGroups: [group], resources: [wanted.name], verbs: ["get", "list", "watch", "patch"] });
    where.push({ apiGroups: [group], resources: [`${wanted.name}/status`], verbs: ["patch"] });
  }
  for (const selector of children) {
    // Children are created, applied (a PATCH), replaced, read, watched and deleted through ctx.api.
    const { wanted, group, where } = placed(selector);
    where.push({ apiGroups: [group], resources: [wanted.name], verbs: ["get", "list", "watch", "create", "update", "patch", "delete"] });
  }
  rules.namespaced.push({ apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] });
  const peering = settings.peering;
  if (settings.sharding.enabled) {
    // Shard and membership Leases: created, renewed and released by update, followed by watch,
    // and a replica's membership deleted when it leaves.
    rules.own.push({ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "watch", "create", "update", "delete"] });
  }
  if (!peering.standalone && peering.mode === "lease") {
    // Acquire by create, renew and release by update (optimistic concurrency); follow by watch.
    rules.own.push({ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "watch", "create", "update"] });
  } else if (!peering.standalone) {
    const resource = peeringResource(peering.group, !peering.clusterwide);
    const where = peering.clusterwide ? rules.cluster : rules.namespaced;
    where.push({ apiGroups: [resource.group], resources: [resource.plural], verbs: ["get", "list", "watch", "create", "patch"] });
    // Where a cluster's peering CRD has a status subresource, records go there.
    where.push({ apiGroups: [resource.group], resources: [`${resource.plural}/status`], verbs: ["patch"] });
  }
  if (fixedNamespaces(settings) === null && !settings.namespaces.allNamespaces) {
    // Globs: the runtime watches Namespace objects to find the matching ones.
    rules.cluster.push({ apiGroups: [""], resources: ["namespaces"], verbs: ["list", "watch"] });
  }
  return rules;
}

const RBAC = "rbac.authorization.k8s.io/v1";

/**
 * The namespaces that get a Role each, or null when the operator watches cluster-wide: with
 * -A or only exclusions; with globs (no Role can name them); and above
 * `watching.clusterWideAbove` fixed namespaces (or fewer, when a watch per namespace and
 * resource would not fit the connection budget), where it watches each resource once for all.
 */
function roleNamespaces(settings: Settings, rules: RbacRules): string[] | null {
  const fixed = fixedNamespaces(settings);
  if (fixed === null) return null;
  const peering = settings.peering;
  const ownPeering = !peering.standalone && !peering.clusterwide && peering.mode !== "lease";
  const apart = namespacesWatchedApart(settings.watching.clusterWideAbove, {
    perNamespace: rules.resources.namespaced + (ownPeering ? 1 : 0), besides: rules.resources.clusterScoped + 2, limit: deployedStreamLimit,
  });
  return fixed.length > apart ? null : fixed;
}

/** ServiceAccount `name` in `namespace` plus the roles and bindings that grant it `rules`. */
export function rbacObjects(name: string, namespace: string, settings: Settings, rules: RbacRules): KubeObject[] {
  const subjects = [{ kind: "ServiceAccount", name, namespace }];
  const docs: KubeObject[] = [{ apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } }];
  const role = (roleName: string, ns: string, granted: Rule[]) => {
    docs.push({ apiVersion: RBAC, kind: "Role", metadata: { name: roleName, namespace: ns }, rules: granted });
    docs.push({
      apiVersion: RBAC, kind: "RoleBinding", metadata: { name: roleName, namespace: ns },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: roleName }, subjects,
    });
  };
  const fixed = roleNamespaces(settings, rules);
  const clusterRules = fixed === null ? [...rules.namespaced, ...rules.cluster] : rules.cluster;
  if (clusterRules.length > 0) {
    docs.push({ apiVersion: RBAC, kind: "ClusterRole", metadata: { name }, rules: clusterRules });
    docs.push({
      apiVersion: RBAC, kind: "ClusterRoleBinding", metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name }, subjects,
    });
  }
  for (const ns of fixed ?? []) role(name, ns, rules.namespaced);
  // Its own name: the operator's namespace may also be a served one, with a Role `name` there.
  if (rules.own.length > 0) role(`${name}-lease`, namespace, rules.own);
  return docs;
}
