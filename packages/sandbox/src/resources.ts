// The resource registry: which (group, version, plural) the sandbox serves, their kinds,
// scope and subresources. Built-in kinds are registered at start; a CustomResourceDefinition
// registers (and on deletion unregisters) its resource, as kube-apiserver does.

import { ApiStatusError } from "./status.ts";
import { addWarning } from "./warnings.ts";
import { crdSchemaErrors, dropUnknownSchemaFields, type SchemaError } from "./crd-schema.ts";
import { byVersionPriority } from "./version-priority.ts";

export interface ResourceDef {
  group: string;
  /** served versions, in declaration order; the first one is the preferred version */
  versions: string[];
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  /** versions that have a /status subresource */
  statusVersions: Set<string>;
  shortNames: string[];
  /** discovery categories: `kubectl get all` asks for every resource in "all" */
  categories: string[];
  /** the verbs discovery advertises; create-only reviews (reviews.ts) store nothing */
  verbs: string[];
  /** CRDs: the versions with a /scale subresource, and where its numbers live */
  scales?: Map<string, ScalePaths>;
  /** CRDs: each served version's additionalPrinterColumns (the Table columns of `kubectl get`) */
  printerColumns?: Map<string, PrinterColumn[]>;
  /** set for resources defined by a CRD */
  crdName?: string;
  /**
   * The resourceVersion at which the resource started being served (its watch cache's initial
   * list, in the real server): sandbox start for built-ins, the CRD's creation for custom
   * resources. A watch from an older (non-zero) resourceVersion is too old (410).
   */
  startRV: number;
  /** CRDs: each served version's `openAPIV3Schema` (pruning and type validation, see schema.ts) */
  schemas?: Map<string, Record<string, any>>;
  /** CRDs: the version marked `storage`, whose schema's defaults apply to what is read back */
  storageVersion?: string;
}

/** the key a resource's objects are stored under, independent of version */
export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  format?: string;
  description?: string;
  priority?: number;
}

/** a CRD version's `subresources.scale` */
export interface ScalePaths { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string }

/** what every stored resource answers to */
export const STORED_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

export function resourceKey(group: string, plural: string): string {
  return `${group}/${plural}`;
}

function builtin(group: string, version: string, plural: string, kind: string, namespaced: boolean, status: boolean,
  shortNames: string[] = [], categories: string[] = [], verbs = STORED_VERBS): ResourceDef {
  return {
    group, versions: [version], plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List`, namespaced,
    statusVersions: new Set(status ? [version] : []), shortNames, categories, verbs, startRV: 0,
  };
}

/** a create-only review: answered from the request, never stored (reviews.ts) */
function review(group: string, plural: string, kind: string): ResourceDef {
  return builtin(group, "v1", plural, kind, false, false, [], [], ["create"]);
}

export class ResourceRegistry {
  private readonly defs = new Map<string, ResourceDef>();

  constructor() {
    for (const def of [
      builtin("", "v1", "namespaces", "Namespace", false, true, ["ns"]),
      builtin("", "v1", "events", "Event", true, false, ["ev"]),
      builtin("", "v1", "configmaps", "ConfigMap", true, false, ["cm"]),
      builtin("", "v1", "secrets", "Secret", true, false),
      builtin("events.k8s.io", "v1", "events", "Event", true, false, ["ev"]),
      builtin("coordination.k8s.io", "v1", "leases", "Lease", true, false),
      builtin("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false, true,
        ["crd", "crds"]),
      // What `kobun manifests` emits, so its output can be applied to the sandbox as to a cluster.
      builtin("", "v1", "serviceaccounts", "ServiceAccount", true, false, ["sa"]),
      builtin("apps", "v1", "deployments", "Deployment", true, true, ["deploy"], ["all"]),
      // The rest of the "all" category, stored as given (no controllers run here, as in
      // test/cluster), so `kubectl get all` asks for the same kinds on both.
      builtin("", "v1", "pods", "Pod", true, true, ["po"], ["all"]),
      builtin("", "v1", "services", "Service", true, true, ["svc"], ["all"]),
      builtin("", "v1", "replicationcontrollers", "ReplicationController", true, true, ["rc"], ["all"]),
      builtin("apps", "v1", "daemonsets", "DaemonSet", true, true, ["ds"], ["all"]),
      builtin("apps", "v1", "replicasets", "ReplicaSet", true, true, ["rs"], ["all"]),
      builtin("apps", "v1", "statefulsets", "StatefulSet", true, true, ["sts"], ["all"]),
      builtin("batch", "v1", "jobs", "Job", true, true, [], ["all"]),
      builtin("batch", "v1", "cronjobs", "CronJob", true, true, ["cj"], ["all"]),
      builtin("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, true, ["hpa"], ["all"]),
      // The kinds operators most often own besides workloads (defaults-kinds.ts)
      builtin("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true, true, ["pvc"]),
      builtin("networking.k8s.io", "v1", "ingresses", "Ingress", true, true, ["ing"]),
      builtin("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true, true, ["pdb"]),
      builtin("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", true, false, ["netpol"]),
      builtin("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false, false),
      builtin("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", false, false),
      builtin("rbac.authorization.k8s.io", "v1", "roles", "Role", true, false),
      builtin("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true, false),
      // Admission webhooks the sandbox calls (admission.ts).
      builtin("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration",
        false, false),
      builtin("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration",
        false, false),
      review("authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview"),
      review("authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview"),
      review("authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview"),
    ]) this.defs.set(resourceKey(def.group, def.plural), def);
  }

  all(): ResourceDef[] {
    return [...this.defs.values()];
  }

  byKey(key: string): ResourceDef | undefined {
    return this.defs.get(key);
  }

  /** the resource served at group/version/plural, or undefined */
  find(group: string, version: string, plural: string): ResourceDef | undefined {
    const def = this.defs.get(resourceKey(group, plural));
    return def && def.versions.includes(version) ? def : undefined;
  }

  /**
   * Each group's versions, the preferred first. A group of CRDs lists them as kube-apiserver does: by
   * version priority (GA, then beta, then alpha; the higher number first), so a group serving v1 and v2
   * prefers v2. Built-in groups keep the order they are declared in (their preferred one first).
   */
  groups(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    const custom = new Set<string>();
    for (const def of this.defs.values()) {
      if (!def.group) continue;
      const vs = out.get(def.group) ?? [];
      for (const v of def.versions) if (!vs.includes(v)) vs.push(v);
      out.set(def.group, vs);
      if (def.crdName !== undefined) custom.add(def.group);
    }
    for (const group of custom) out.get(group)!.sort(byVersionPriority);
    return out;
  }

  /** register (or re-register) the resource a CRD body describes; throws 422 if malformed */
  registerCRD(crd: any): ResourceDef {
    const spec = crd?.spec ?? {};
    const names = spec.names ?? {};
    const name: string = crd?.metadata?.name ?? "";
    const invalid = crdInvalid(name);
    validateCRD(name, spec, invalid);
    for (const field of dropUnknownSchemaFields(spec)) addWarning(`unknown field "${field}"`);
    const schemaErrors = crdSchemaErrors(spec);
    if (schemaErrors.length) throw crdSchemaInvalid(name, schemaErrors);
    const versions: any[] = spec.versions;
    const served = versions.filter((v) => v?.served !== false).map((v) => String(v.name));
    const existing = this.defs.get(resourceKey(spec.group, names.plural));
    if (existing && !existing.crdName) {
      throw invalid("spec.names.plural", "Invalid value: conflicts with a built-in resource");
    }
    const def: ResourceDef = {
      group: spec.group,
      versions: served,
      plural: names.plural,
      singular: names.singular || String(names.kind).toLowerCase(),
      kind: names.kind,
      listKind: names.listKind || `${names.kind}List`,
      namespaced: spec.scope === "Namespaced",
      statusVersions: new Set(
        versions.filter((v) => v?.served !== false && v?.subresources?.status !== undefined).map((v) => String(v.name)),
      ),
      shortNames: Array.isArray(names.shortNames) ? names.shortNames : [],
      categories: Array.isArray(names.categories) ? names.categories : [],
      verbs: STORED_VERBS,
      printerColumns: crdPrinterColumns(versions),
      scales: new Map(versions
        .filter((v) => v?.served !== false && typeof v?.subresources?.scale?.specReplicasPath === "string")
        .map((v) => [String(v.name), v.subresources.scale as ScalePaths])),
      crdName: name,
      // a re-registration (CRD update) keeps serving from the same start
      startRV: existing?.startRV ?? 0,
      schemas: crdSchemas(spec),
      storageVersion: versions.find((v) => v?.storage === true)?.name,
    };
    this.defs.set(resourceKey(def.group, def.plural), def);
    return def;
  }

  unregisterCRD(crdName: string): ResourceDef | undefined {
    for (const [key, def] of this.defs) {
      if (def.crdName === crdName) {
        this.defs.delete(key);
        return def;
      }
    }
    return undefined;
  }
}

/** the 422 a malformed CRD named `name` is refused with, naming the field at fault */
function crdInvalid(name: string): (field: string, msg: string) => ApiStatusError {
  return (field, msg) => new ApiStatusError(422, "Invalid",
    `CustomResourceDefinition.apiextensions.k8s.io "${name}" is invalid: ${field}: ${msg}`,
    {
      name, group: "apiextensions.k8s.io", kind: "CustomResourceDefinition",
      causes: [{ reason: "FieldValueInvalid", message: msg, field }],
    });
}

/** the 422 of a CRD whose schemas the real server refuses: every error, in a list when more than one */
function crdSchemaInvalid(name: string, errors: SchemaError[]): ApiStatusError {
  const lines = errors.map((e) => `${e.field}: ${e.body}`);
  return new ApiStatusError(422, "Invalid", `CustomResourceDefinition.apiextensions.k8s.io "${name}" is invalid: ${
    lines.length === 1 ? lines[0] : `[${lines.join(", ")}]`}`, {
    name, group: "apiextensions.k8s.io", kind: "CustomResourceDefinition",
    causes: errors.map((e) => ({ reason: e.reason, message: e.body, field: e.field })),
  });
}

/** throws the first problem of a CRD's spec: its group, names, name, scope and versions */
function validateCRD(name: string, spec: any, invalid: ReturnType<typeof crdInvalid>): void {
  const names = spec.names ?? {};
  if (typeof spec.group !== "string" || !spec.group.includes(".")) {
    throw invalid("spec.group", "Invalid value: should be a domain with at least one dot");
  }
  if (typeof names.plural !== "string" || !names.plural) throw invalid("spec.names.plural", "Required value");
  if (typeof names.kind !== "string" || !names.kind) throw invalid("spec.names.kind", "Required value");
  if (name !== `${names.plural}.${spec.group}`) {
    throw invalid("metadata.name", `Invalid value: "${name}": must be spec.names.plural+"."+spec.group`);
  }
  if (spec.scope !== "Namespaced" && spec.scope !== "Cluster") {
    throw invalid("spec.scope", `Unsupported value: "${spec.scope}": supported values: "Cluster", "Namespaced"`);
  }
  if (!Array.isArray(spec.versions) || !spec.versions.length) {
    throw invalid("spec.versions", "Invalid value: must have exactly one version marked as storage version");
  }
}

/** each served version's structural schema; none at all with the legacy `spec.preserveUnknownFields: true` */
function crdSchemas(spec: any): Map<string, Record<string, any>> | undefined {
  if (spec.preserveUnknownFields === true) return undefined;
  const out = new Map<string, Record<string, any>>();
  const common = spec.validation?.openAPIV3Schema;
  for (const v of Array.isArray(spec.versions) ? spec.versions : []) {
    const schema = v?.schema?.openAPIV3Schema ?? common;
    if (v?.served !== false && schema && typeof schema === "object") out.set(String(v.name), schema);
  }
  return out;
}

/** each served version's additionalPrinterColumns (absent: the default NAME and AGE columns) */
function crdPrinterColumns(versions: any[]): Map<string, PrinterColumn[]> {
  const out = new Map<string, PrinterColumn[]>();
  for (const v of versions) {
    if (v?.served !== false && Array.isArray(v?.additionalPrinterColumns)) {
      out.set(String(v.name), v.additionalPrinterColumns);
    }
  }
  return out;
}

/** fill the status a CRD gets from the apiextensions controllers (set synchronously here) */
export function crdStatus(crd: any, now: string): Record<string, unknown> {
  const spec = crd.spec ?? {};
  const cond = (type: string, reason: string, message: string) =>
    ({ type, status: "True", lastTransitionTime: now, reason, message });
  const names = spec.names ?? {};
  return {
    conditions: [
      cond("NamesAccepted", "NoConflicts", "no conflicts found"),
      cond("Established", "InitialNamesAccepted", "the initial names have been accepted"),
    ],
    acceptedNames: {
      ...names,
      singular: names.singular || String(names.kind ?? "").toLowerCase(),
      listKind: names.listKind || `${names.kind}List`,
    },
    storedVersions: (spec.versions ?? []).filter((v: any) => v?.storage).map((v: any) => v.name),
  };
}
