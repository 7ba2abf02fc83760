// The /scale subresource of the workload kinds and of CRD versions that declare one (`kubectl
// scale`): an autoscaling/v1 Scale read from the object (spec.replicas, status.replicas, the
// selector as a string; a CRD's specReplicasPath, statusReplicasPath, labelSelectorPath), and
// written back as a change of the replicas only. PATCH applies its patch to the Scale. A write
// is reviewed by the webhooks first, as kube-apiserver's: UPDATE of subresource "scale", the
// old and new Scale as its objects.

import { jsonPathValues } from "./jsonpath.ts";
import { mergePatch, requestJsonPatch } from "./patch.ts";
import type { Objects, WriteOptions } from "./objects.ts";
import type { ResourceDef, ScalePaths } from "./resources.ts";
import { errors } from "./status.ts";
import { strategicMergePatch } from "./strategic.ts";

/** built-in kinds with a /scale subresource */
const SCALABLE = new Set(["apps/deployments", "apps/replicasets", "apps/statefulsets", "/replicationcontrollers"]);
const BUILTIN: ScalePaths = { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" };

/** where a version's scale numbers live, or undefined when it has no /scale */
export function scalePaths(def: ResourceDef, version: string): ScalePaths | undefined {
  if (def.crdName) return def.scales?.get(version);
  return SCALABLE.has(`${def.group}/${def.plural}`) ? BUILTIN : undefined;
}

/** a merge patch setting a simple `.a.b` path */
function setAt(path: string, value: unknown): Record<string, unknown> {
  const keys = path.replace(/^\./, "").split(".");
  return keys.reduceRight<any>((inner, key) => ({ [key]: inner }), value);
}

function selectorText(sel: any, plural: string): string {
  // a ReplicationController's selector is a plain map
  const labels = plural === "replicationcontrollers" ? sel ?? {} : sel?.matchLabels ?? {};
  const parts = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
  for (const e of sel?.matchExpressions ?? []) {
    parts.push(`${e.key} ${String(e.operator).toLowerCase()} (${(e.values ?? []).join(",")})`);
  }
  return parts.join(",");
}

export function scaleOf(def: ResourceDef, paths: ScalePaths, obj: any): any {
  const { name, namespace, uid, resourceVersion, creationTimestamp } = obj.metadata;
  const at = (p: string | undefined) => (p ? jsonPathValues(obj, p)[0] : undefined);
  const selector = def.crdName ? at(paths.labelSelectorPath) ?? "" : selectorText(obj.spec?.selector, def.plural);
  return {
    kind: "Scale", apiVersion: "autoscaling/v1",
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: { replicas: at(paths.specReplicasPath) ?? (def.crdName ? 0 : 1) },
    status: { replicas: at(paths.statusReplicasPath) ?? 0, ...(selector ? { selector } : {}) },
  };
}

/** The webhooks' review of a Scale write (admission.ts): the Scale to write, maybe changed by mutators. */
export type AdmitScale = (oldScale: any, newScale: any) => Promise<any>;

function checkReplicas(name: string, scale: any): void {
  const replicas = scale?.spec?.replicas;
  if (!Number.isInteger(replicas) || replicas < 0) {
    const message = `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`;
    throw errors.invalid("autoscaling", "Scale", name, "spec.replicas", message);
  }
}

/** GET, PUT or PATCH `.../{name}/scale`; a write goes through `admit` (the webhooks) before it is made */
export async function scaleRequest(
  objects: Objects, def: ResourceDef, paths: ScalePaths, version: string, ns: string, name: string,
  method: string, contentType: string, body: unknown, options: WriteOptions, admit: AdmitScale,
): Promise<any> {
  const current = objects.get(def, ns, name);
  if (method === "GET") return scaleOf(def, paths, current);
  let wanted: any;
  if (method === "PUT") wanted = body;
  else if (method === "PATCH") {
    const scale = scaleOf(def, paths, current);
    if (contentType === "application/merge-patch+json") wanted = mergePatch(scale, body);
    else if (contentType === "application/json-patch+json") wanted = requestJsonPatch(scale, body);
    else if (contentType === "application/strategic-merge-patch+json") wanted = strategicMergePatch(scale, body);
    else throw errors.unsupportedMediaType(contentType);
  } else throw errors.methodNotAllowed();
  checkReplicas(name, wanted);
  const rv = wanted?.metadata?.resourceVersion;
  if (rv && rv !== current.metadata.resourceVersion) throw errors.conflict(def.group, def.plural, name);
  const admitted = await admit(scaleOf(def, paths, current), wanted);
  checkReplicas(name, admitted);
  const patch = setAt(paths.specReplicasPath, admitted.spec.replicas);
  const updated = objects.patch(def, version, ns, name, "application/merge-patch+json", patch, undefined, options);
  return scaleOf(def, paths, updated);
}
