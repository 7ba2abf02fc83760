// metadata.generation as kube-apiserver keeps it: only a kind whose registry strategy tracks it
// (every custom resource; among the built-ins the workloads, HPAs, Ingresses, NetworkPolicies, PDBs, webhook
// configurations and CRDs) starts at 1 and counts spec changes (a Deployment's annotation changes too). Every other
// kind (ConfigMap, Secret, Service, Namespace, RBAC, ...) has none, unless the client sent one on
// create: the real server keeps that as given and no update changes it (test/e2e/generation.e2e.ts,
// checked against the real server).

import type { ResourceDef } from "./resources.ts";

const TRACKED = new Set([
  "/pods", "/replicationcontrollers", "apps/deployments", "apps/replicasets", "apps/daemonsets", "apps/statefulsets",
  "batch/jobs", "batch/cronjobs", "autoscaling/horizontalpodautoscalers", "networking.k8s.io/ingresses",
  "networking.k8s.io/networkpolicies", "policy/poddisruptionbudgets",
  "admissionregistration.k8s.io/validatingwebhookconfigurations",
  "admissionregistration.k8s.io/mutatingwebhookconfigurations", "apiextensions.k8s.io/customresourcedefinitions",
]);

type Kind = Pick<ResourceDef, "group" | "plural" | "crdName">;

/** whether the kind's strategy sets metadata.generation (1 on create, +1 on a spec change) */
export function tracksGeneration(def: Kind): boolean {
  return def.crdName !== undefined || TRACKED.has(`${def.group}/${def.plural}`);
}

/**
 * `next`'s generation after an update of `old`: old's (a client cannot set it), one more when a
 * tracked kind's spec changed; a Deployment's also when its annotations did (they are copied to its
 * ReplicaSets: the deployment strategy's PrepareForUpdate, not its status strategy's: a /status write that
 * changes them leaves the generation)
 */
export function updateGeneration(def: Kind, old: any, next: any, specChanged: boolean, status = false): void {
  const generation = old.metadata.generation;
  const annotated = !status && def.group === "apps" && def.plural === "deployments"
    && !sameMap(old.metadata.annotations, next.metadata.annotations);
  if (generation === undefined) delete next.metadata.generation;
  else next.metadata.generation = tracksGeneration(def) && (specChanged || annotated) ? generation + 1 : generation;
}

/** two string maps equal, an absent one as an empty one (apiequality.Semantic) */
function sameMap(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const [x, y] = [a ?? {}, b ?? {}];
  return Object.keys(x).length === Object.keys(y).length && Object.keys(x).every((k) => y[k] === x[k]);
}

/**
 * the generation of an object whose deletion is only marked (finalizers): the generic delete adds
 * one where there is one; a CRD's own delete leaves it
 */
export function markedDeletionGeneration(def: Kind, generation: number | undefined): number | undefined {
  const crd = def.group === "apiextensions.k8s.io" && def.plural === "customresourcedefinitions";
  return generation !== undefined && generation > 0 && !crd ? generation + 1 : generation;
}

const TEMPLATE_GENERATION = "deprecated.daemonset.template.generation";

/**
 * A DaemonSet's template generation, which apps/v1 writes as an annotation: on create the one sent (1 when none,
 * or less); on any update the stored one, one more when the pod template changed. What a client sends in the
 * annotation afterwards is not kept.
 */
export function daemonSetTemplateGeneration(def: Kind, next: any, old?: any): void {
  if (def.group !== "apps" || def.plural !== "daemonsets" || !next.metadata) return;
  let generation: number;
  if (old) {
    generation = Number.parseInt(old.metadata?.annotations?.[TEMPLATE_GENERATION] ?? "1", 10) || 1;
    if (JSON.stringify(old.spec?.template) !== JSON.stringify(next.spec?.template)) generation++;
  } else {
    const sent = Number.parseInt(next.metadata.annotations?.[TEMPLATE_GENERATION] ?? "", 10);
    generation = sent >= 1 ? sent : 1;
  }
  next.metadata.annotations = { ...(next.metadata.annotations ?? {}), [TEMPLATE_GENERATION]: String(generation) };
}
