// The RBAC that `kobun manifests` emits: exactly what `kobun run` with the same settings
// requests, granted where it requests it. Three places:
//   - the served namespaces: handled namespaced resources, their Events, per-namespace peering;
//   - the cluster: cluster-scoped handled resources, cluster-wide peering, and, when the
//     operator watches cluster-wide (-A, only exclusions, globs, more fixed namespaces than
//     watching.clusterWideAbove, or fewer: streams/coverage.ts), everything above too; with
//     globs, list/watch of Namespaces;
//   - the operator's own namespace: the Lease (lease mode keeps it in $POD_NAMESPACE).
// A Role cannot name a glob as its namespace, nor grant a cluster-scoped resource, so those
// always go to a ClusterRole.

import { fixedNamespaces, type NamespaceSettings, type Settings } from "../../config/index.ts";
import { parseSelector, type KubeObject, type ResourceSelector } from "../../kube/index.ts";
import { peeringResource } from "../../peering/index.ts";
import { namespacesWatchedApart } from "../../streams/index.ts";
import { builtinNamed } from "./builtins.ts";
import { crdNamed, deployedStreamLimit } from "./shipped.ts";

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
  /** Resources with namespaces of their own (kobun.yaml): granted there, not in the global ones. */
  apart: { namespaces: NamespaceSettings; rules: Rule[] }[];
}

export interface RbacInput {
  settings: Settings;
  selectors: ResourceSelector[];
  /** The CRDs shipped beside the handlers: they tell a resource's group and scope. */
  crds: KubeObject[];
  /**
   * The resources handlers declared as children (`{ children: [...] }`): full access, where the
   * handled objects are.
   */
  children?: ResourceSelector[];
  /** Of `selectors`, those nothing writes: read by indexes (`on.index`) or a reconcile's `watches`. */
  watched?: ResourceSelector[];
  /**
   * Of `selectors`, those handled by on.event handlers alone: read, and patched only to release a
   * kobun finalizer left by handlers that no longer match (else the object stays Terminating); no /status.
   */
  eventOnly?: ResourceSelector[];
  /** Of `selectors`, those kobun.yaml gives namespaces of their own (config's resourceNamespaces). */
  apart?: Map<ResourceSelector, NamespaceSettings>;
  /**
   * Of `selectors`, those reconciles own and nothing handles: written through ctx.api as children
   * (granted by `children`), never by kobun's engine (no results, finalizer or /status).
   */
  ownedOnly?: ResourceSelector[];
  /** Of `selectors`, those whose handlers make children (adopt() names them owners): update of their finalizers. */
  owners?: ResourceSelector[];
}

const EVENTS: Rule = { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] };
const FOLLOW_NAMESPACES: Rule = { apiGroups: [""], resources: ["namespaces"], verbs: ["list", "watch"] };
const LEASES = { apiGroups: ["coordination.k8s.io"], resources: ["leases"] };

/**
 * The group and plural RBAC and webhook rules name a selector's resource by (a CRD's other names
 * are turned into its plural), its scope, the version the selector names, and the shipped CRD.
 */
export function grantedName(
  crds: KubeObject[], selector: ResourceSelector,
): { group: string; plural: string; clusterScoped: boolean; version?: string; crd?: KubeObject } {
  const wanted = parseSelector(selector);
  const crd = crdNamed(crds, selector);
  // Without a CRD here, a built-in (nodes: cluster-scoped, granted by the ClusterRole) or else a namespaced resource.
  const builtin = crd ? undefined : builtinNamed(selector);
  const group = wanted.group ?? (crd?.spec?.group as string | undefined) ?? builtin?.group ?? "";
  return {
    group, plural: crd?.spec?.names?.plural ?? builtin?.plural ?? wanted.name,
    clusterScoped: crd ? crd.spec?.scope === "Cluster" : builtin?.namespaced === false,
    ...(wanted.version ? { version: wanted.version } : {}), ...(crd ? { crd } : {}),
  };
}

/** The rules the operator needs, by where it needs them: no more than its handlers, peering and events require. */
export function rbacRules(input: RbacInput): RbacRules {
  const { settings, selectors, crds, children = [], watched = [], eventOnly = [], apart = new Map() } = input;
  const { ownedOnly = [], owners = [] } = input;
  const rules: RbacRules = {
    namespaced: [], cluster: [], own: [], resources: { namespaced: 0, clusterScoped: 0 }, apart: [],
  };
  const placed = (selector: ResourceSelector) => {
    const named = grantedName(crds, selector);
    return { ...named, where: named.clusterScoped ? rules.cluster : rules.namespaced };
  };
  for (const selector of selectors) {
    const { plural, group, clusterScoped, where: placedWhere } = placed(selector);
    const own = clusterScoped ? undefined : apart.get(selector);
    let where = placedWhere;
    if (own) {
      // Its own namespaces: its grants (and its Events) go there.
      where = [EVENTS];
      rules.apart.push({ namespaces: own, rules: where });
      followGlobs(rules, own);
    } else rules.resources[clusterScoped ? "clusterScoped" : "namespaced"]++;
    if (ownedOnly.includes(selector)) continue;
    const released = eventOnly.includes(selector);
    if (watched.includes(selector) || released) {
      // Only read (an index, a reconcile's watches), or patched only to release a leftover finalizer.
      const verbs = released ? ["get", "list", "watch", "patch"] : ["get", "list", "watch"];
      where.push({ apiGroups: [group], resources: [plural], verbs });
      continue;
    }
    // The engine only reads, watches and merge-patches (results, progress, finalizers).
    where.push({ apiGroups: [group], resources: [plural], verbs: ["get", "list", "watch", "patch"] });
    where.push({ apiGroups: [group], resources: [`${plural}/status`], verbs: ["patch"] });
    // adopt() sets blockOwnerDeletion, which the OwnerReferencesPermissionEnforcement admission
    // plugin (on in OpenShift) allows only to who may update the owner's finalizers: without it
    // every create of a child is refused 403 there. Granted to the owners adopt() names alone: the
    // resources whose handlers make children (as kubebuilder's markers grant it, per controller).
    const finalizers = `${plural}/finalizers`;
    if (owners.includes(selector)) where.push({ apiGroups: [group], resources: [finalizers], verbs: ["update"] });
  }
  for (const selector of children) {
    // Children are created, applied (a PATCH), replaced, read, watched and deleted through ctx.api,
    // where the handled objects are: resources with namespaces of their own take them there too.
    const { plural, group, where } = placed(selector);
    const verbs = ["get", "list", "watch", "create", "update", "patch", "delete"];
    const rule = { apiGroups: [group], resources: [plural], verbs };
    where.push(rule);
    if (where === rules.namespaced) for (const own of rules.apart) own.rules.push(rule);
  }
  rules.namespaced.push(EVENTS);
  grantCoordination(settings, rules);
  followGlobs(rules, settings.namespaces);
  return rules;
}

/** What replicas need to take turns or share the work: the shard Leases, the lease, or the peering object. */
function grantCoordination(settings: Settings, rules: RbacRules): void {
  const peering = settings.peering;
  if (settings.sharding.enabled) {
    // Shard and membership Leases: created, renewed and released by update, followed by watch,
    // and a replica's membership deleted when it leaves.
    rules.own.push({ ...LEASES, verbs: ["get", "list", "watch", "create", "update", "delete"] });
  }
  if (!peering.standalone && peering.mode === "lease") {
    // Acquire by create, renew and release by update (optimistic concurrency); follow by watch.
    rules.own.push({ ...LEASES, verbs: ["get", "list", "watch", "create", "update"] });
  } else if (!peering.standalone) {
    const resource = peeringResource(peering.group, !peering.clusterwide);
    const where = peering.clusterwide ? rules.cluster : rules.namespaced;
    const verbs = ["get", "list", "watch", "create", "patch"];
    where.push({ apiGroups: [resource.group], resources: [resource.plural], verbs });
    // Where a cluster's peering CRD has a status subresource, records go there.
    where.push({ apiGroups: [resource.group], resources: [`${resource.plural}/status`], verbs: ["patch"] });
  }
}

/** Globs: the runtime watches Namespace objects to find the matching ones. */
function followGlobs(rules: RbacRules, namespaces: NamespaceSettings): void {
  const globbed = fixedNamespaces({ namespaces }) === null && !namespaces.allNamespaces;
  if (globbed && !rules.cluster.includes(FOLLOW_NAMESPACES)) rules.cluster.push(FOLLOW_NAMESPACES);
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
    perNamespace: rules.resources.namespaced + (ownPeering ? 1 : 0), besides: rules.resources.clusterScoped + 2,
    limit: deployedStreamLimit,
  });
  return fixed.length > apart ? null : fixed;
}

/**
 * A resource's own namespaces that get a Role each, or null when it is watched cluster-wide (as
 * roleNamespaces decides for the global ones).
 */
function apartNamespaces(settings: Settings, namespaces: NamespaceSettings, rules: RbacRules): string[] | null {
  const fixed = fixedNamespaces({ namespaces });
  if (fixed === null) return null;
  const apart = namespacesWatchedApart(settings.watching.clusterWideAbove, {
    perNamespace: 1, besides: rules.resources.clusterScoped + 2, limit: deployedStreamLimit,
  });
  return fixed.length > apart ? null : fixed;
}

/** ServiceAccount `name` in `namespace` plus the roles and bindings that grant it `rules`. */
export function rbacObjects(name: string, namespace: string, settings: Settings, rules: RbacRules): KubeObject[] {
  const subjects = [{ kind: "ServiceAccount", name, namespace }];
  const docs: KubeObject[] = [{ apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } }];
  const role = (roleName: string, ns: string, granted: Rule[]) => {
    const rules = mergedRules(granted);
    docs.push({ apiVersion: RBAC, kind: "Role", metadata: { name: roleName, namespace: ns }, rules });
    docs.push({
      apiVersion: RBAC, kind: "RoleBinding", metadata: { name: roleName, namespace: ns },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: roleName }, subjects,
    });
  };
  const fixed = roleNamespaces(settings, rules);
  const clusterRules = fixed === null ? [...rules.namespaced, ...rules.cluster] : [...rules.cluster];
  const roles = new Map<string, Rule[]>((fixed ?? []).map((ns) => [ns, [...rules.namespaced]]));
  for (const group of rules.apart) {
    const own = apartNamespaces(settings, group.namespaces, rules);
    if (own === null) clusterRules.push(...group.rules.filter((rule) => !clusterRules.includes(rule)));
    else {
      for (const ns of own) {
        const held = roles.get(ns) ?? [];
        roles.set(ns, [...held, ...group.rules.filter((rule) => !held.includes(rule))]);
      }
    }
  }
  if (clusterRules.length > 0) {
    docs.push({ apiVersion: RBAC, kind: "ClusterRole", metadata: { name }, rules: mergedRules(clusterRules) });
    docs.push({
      apiVersion: RBAC, kind: "ClusterRoleBinding", metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name }, subjects,
    });
  }
  for (const [ns, granted] of roles) role(name, ns, granted);
  // Its own name: the operator's namespace may also be a served one, with a Role `name` there.
  if (rules.own.length > 0) role(`${name}-lease`, namespace, rules.own);
  return docs;
}

/**
 * One rule per API group and resource: a resource granted for two reasons (handled, and a child
 * of another's handlers) is listed once, with the verbs of both, in the order first granted.
 */
export function mergedRules(rules: readonly Rule[]): Rule[] {
  const merged: Rule[] = [];
  const byResource = new Map<string, Rule>();
  for (const rule of rules) {
    const single = rule.apiGroups.length === 1 && rule.resources.length === 1 && !rule.resourceNames;
    const key = single ? `${rule.apiGroups[0]}/${rule.resources[0]}` : undefined;
    const earlier = key === undefined ? undefined : byResource.get(key);
    if (earlier) {
      earlier.verbs.push(...rule.verbs.filter((verb) => !earlier.verbs.includes(verb)));
      continue;
    }
    const copy = { ...rule, verbs: [...rule.verbs] };
    merged.push(copy);
    if (key !== undefined) byResource.set(key, copy);
  }
  return merged;
}
