// The built-in resources of Kubernetes (v1.37.2's discovery, each group's preferred version, as
// test/cluster's kube-apiserver serves them with its default API groups): what `kobun manifests`
// knows of a resource no shipped CRD names, since it asks no API server. Their group and plural
// are what RBAC rules name (a selector may say `Job`, `deploy` or `deployments` alone), and their
// scope says where a grant works: a Role granting a cluster-scoped resource (nodes, namespaces)
// grants nothing, so those go to the ClusterRole. Resolved as discovery resolves a name
// (kube/discovery.ts): exact plurals before kinds and short names, the core group winning ties.

import { selectorMatches } from "../../declaring/index.ts";
import { parseSelector, type ResourceSelector } from "../../kube/index.ts";

/** group, plural, kind, namespaced, short names (space-separated). */
type Row = readonly [string, string, string, boolean, string];

const ROWS: readonly Row[] = [
  ["", "bindings", "Binding", true, ""],
  ["", "componentstatuses", "ComponentStatus", false, "cs"],
  ["", "configmaps", "ConfigMap", true, "cm"],
  ["", "endpoints", "Endpoints", true, "ep"],
  ["", "events", "Event", true, "ev"],
  ["", "limitranges", "LimitRange", true, "limits"],
  ["", "namespaces", "Namespace", false, "ns"],
  ["", "nodes", "Node", false, "no"],
  ["", "persistentvolumeclaims", "PersistentVolumeClaim", true, "pvc"],
  ["", "persistentvolumes", "PersistentVolume", false, "pv"],
  ["", "pods", "Pod", true, "po"],
  ["", "podtemplates", "PodTemplate", true, ""],
  ["", "replicationcontrollers", "ReplicationController", true, "rc"],
  ["", "resourcequotas", "ResourceQuota", true, "quota"],
  ["", "secrets", "Secret", true, ""],
  ["", "serviceaccounts", "ServiceAccount", true, "sa"],
  ["", "services", "Service", true, "svc"],
  ["apiregistration.k8s.io", "apiservices", "APIService", false, ""],
  ["apps", "controllerrevisions", "ControllerRevision", true, ""],
  ["apps", "daemonsets", "DaemonSet", true, "ds"],
  ["apps", "deployments", "Deployment", true, "deploy"],
  ["apps", "replicasets", "ReplicaSet", true, "rs"],
  ["apps", "statefulsets", "StatefulSet", true, "sts"],
  ["events.k8s.io", "events", "Event", true, "ev"],
  ["authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview", false, ""],
  ["authentication.k8s.io", "tokenreviews", "TokenReview", false, ""],
  ["authorization.k8s.io", "localsubjectaccessreviews", "LocalSubjectAccessReview", true, ""],
  ["authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview", false, ""],
  ["authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview", false, ""],
  ["authorization.k8s.io", "subjectaccessreviews", "SubjectAccessReview", false, ""],
  ["autoscaling", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, "hpa"],
  ["batch", "cronjobs", "CronJob", true, "cj"],
  ["batch", "jobs", "Job", true, ""],
  ["certificates.k8s.io", "certificatesigningrequests", "CertificateSigningRequest", false, "csr"],
  ["certificates.k8s.io", "clustertrustbundles", "ClusterTrustBundle", false, ""],
  ["certificates.k8s.io", "podcertificaterequests", "PodCertificateRequest", true, ""],
  ["networking.k8s.io", "ingressclasses", "IngressClass", false, ""],
  ["networking.k8s.io", "ingresses", "Ingress", true, "ing"],
  ["networking.k8s.io", "ipaddresses", "IPAddress", false, "ip"],
  ["networking.k8s.io", "networkpolicies", "NetworkPolicy", true, "netpol"],
  ["networking.k8s.io", "servicecidrs", "ServiceCIDR", false, ""],
  ["policy", "poddisruptionbudgets", "PodDisruptionBudget", true, "pdb"],
  ["rbac.authorization.k8s.io", "clusterrolebindings", "ClusterRoleBinding", false, ""],
  ["rbac.authorization.k8s.io", "clusterroles", "ClusterRole", false, ""],
  ["rbac.authorization.k8s.io", "rolebindings", "RoleBinding", true, ""],
  ["rbac.authorization.k8s.io", "roles", "Role", true, ""],
  ["storage.k8s.io", "csidrivers", "CSIDriver", false, ""],
  ["storage.k8s.io", "csinodes", "CSINode", false, ""],
  ["storage.k8s.io", "csistoragecapacities", "CSIStorageCapacity", true, ""],
  ["storage.k8s.io", "storageclasses", "StorageClass", false, "sc"],
  ["storage.k8s.io", "volumeattachments", "VolumeAttachment", false, ""],
  ["storage.k8s.io", "volumeattributesclasses", "VolumeAttributesClass", false, "vac"],
  ["admissionregistration.k8s.io", "mutatingadmissionpolicies", "MutatingAdmissionPolicy", false, ""],
  ["admissionregistration.k8s.io", "mutatingadmissionpolicybindings", "MutatingAdmissionPolicyBinding", false, ""],
  ["admissionregistration.k8s.io", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false, ""],
  ["admissionregistration.k8s.io", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", false, ""],
  ["admissionregistration.k8s.io", "validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", false, ""],
  ["admissionregistration.k8s.io", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false, ""],
  ["apiextensions.k8s.io", "customresourcedefinitions", "CustomResourceDefinition", false, "crd crds"],
  ["scheduling.k8s.io", "priorityclasses", "PriorityClass", false, "pc"],
  ["coordination.k8s.io", "leases", "Lease", true, ""],
  ["node.k8s.io", "runtimeclasses", "RuntimeClass", false, ""],
  ["discovery.k8s.io", "endpointslices", "EndpointSlice", true, ""],
  ["resource.k8s.io", "deviceclasses", "DeviceClass", false, ""],
  ["resource.k8s.io", "devicetaintrules", "DeviceTaintRule", false, ""],
  ["resource.k8s.io", "resourceclaims", "ResourceClaim", true, ""],
  ["resource.k8s.io", "resourceclaimtemplates", "ResourceClaimTemplate", true, ""],
  ["resource.k8s.io", "resourceslices", "ResourceSlice", false, ""],
  ["flowcontrol.apiserver.k8s.io", "flowschemas", "FlowSchema", false, ""],
  ["flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations", "PriorityLevelConfiguration", false, ""],
  ["storagemigration.k8s.io", "storageversionmigrations", "StorageVersionMigration", false, ""],
];

export interface Builtin {
  group: string;
  plural: string;
  namespaced: boolean;
}

const BUILTINS = ROWS.map(([group, plural, kind, namespaced, short]) => ({
  group, plural, kind, namespaced, version: "", singular: kind.toLowerCase(), shortNames: short ? short.split(" ") : [],
}));

/** The built-in resource `selector` names, or undefined (none, or several with no core one among them). */
export function builtinNamed(selector: ResourceSelector): Builtin | undefined {
  const wanted = { ...parseSelector(selector), version: undefined };
  const found = BUILTINS.filter((builtin) => selectorMatches(wanted, builtin));
  const exact = found.filter((builtin) => builtin.plural === wanted.name);
  const candidates = exact.length ? exact : found;
  const core = candidates.filter((builtin) => builtin.group === "");
  const only = candidates.length === 1 ? candidates[0] : core.length === 1 ? core[0] : undefined;
  return only && { group: only.group, plural: only.plural, namespaced: only.namespaced };
}
