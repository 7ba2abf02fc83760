// The kinds operators most often own besides workloads (PersistentVolumeClaims, Ingresses, PodDisruptionBudgets,
// NetworkPolicies): their SetDefaults_* (k8s.io/kubernetes/pkg/apis/{core,networking}/v1), and what the real
// server adds to a new one after the field manager, owned by nobody: its first status, and a claim's
// `kubernetes.io/pvc-protection` finalizer (the StorageObjectInUseProtection admission plugin, on by default).
// Compared with kube-apiserver v1.37.2's `-o yaml` right after create (test/e2e/sandbox-kinds.e2e.ts).

import { dflt, each, isObj } from "./defaults-pod.ts";
import { canonicalResources } from "./quantity.ts";

export const PVC_PROTECTION = "kubernetes.io/pvc-protection";

/** SetDefaults_PersistentVolumeClaim(Spec); the phase is also what every read of a stored claim defaults */
function defaultClaim(pvc: any): void {
  if (isObj(pvc.spec)) {
    dflt(pvc.spec, "volumeMode", "Filesystem");
    canonicalResources(pvc.spec.resources?.requests);
    canonicalResources(pvc.spec.resources?.limits);
  }
  if (isObj(pvc.status)) {
    dflt(pvc.status, "phase", "Pending");
    canonicalResources(pvc.status.capacity);
    canonicalResources(pvc.status.allocatedResources);
  }
}

/** SetDefaults_NetworkPolicy: "Ingress" always, "Egress" too when it has egress rules; ports are TCP */
function defaultNetworkPolicy(np: any): void {
  const spec = np.spec;
  if (!isObj(spec)) return;
  if (!Array.isArray(spec.policyTypes) || !spec.policyTypes.length) {
    spec.policyTypes = Array.isArray(spec.egress) && spec.egress.length ? ["Ingress", "Egress"] : ["Ingress"];
  }
  const tcp = (rule: Record<string, any>) => each(rule.ports, (p) => dflt(p, "protocol", "TCP"));
  each(spec.ingress, tcp);
  each(spec.egress, tcp);
}

const DEFAULTS: Record<string, (body: any) => void> = {
  "/persistentvolumeclaims": defaultClaim,
  "networking.k8s.io/networkpolicies": defaultNetworkPolicy,
};

/** the defaults of one of these kinds, in place; false when `plural` is none of them */
export function defaultKind(group: string, plural: string, body: any): boolean {
  const fn = DEFAULTS[`${group}/${plural}`];
  if (fn) fn(body);
  return fn !== undefined;
}

/** a new object's status: its Go struct's fields that are not omitempty, at their zero values */
const NEW_STATUS: Record<string, object> = {
  "/persistentvolumeclaims": { phase: "Pending" },
  "networking.k8s.io/ingresses": { loadBalancer: {} },
  // the disruption controller fills it in later; a cluster without one (test/cluster's) keeps these
  "policy/poddisruptionbudgets": { currentHealthy: 0, desiredHealthy: 0, disruptionsAllowed: 0, expectedPods: 0 },
};

/** what a created object of these kinds gets after the field manager: its first status, a claim's finalizer */
export function allocateKind(group: string, plural: string, body: any): void {
  const status = NEW_STATUS[`${group}/${plural}`];
  if (status) dflt(body, "status", structuredClone(status));
  if (group !== "" || plural !== "persistentvolumeclaims" || !isObj(body.metadata)) return;
  const finalizers: unknown[] = Array.isArray(body.metadata.finalizers) ? body.metadata.finalizers : [];
  if (!finalizers.includes(PVC_PROTECTION)) body.metadata.finalizers = [...finalizers, PVC_PROTECTION];
}
