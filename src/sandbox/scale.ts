// The /scale subresource of the workload kinds (`kubectl scale`): an autoscaling/v1 Scale read
// from the object (spec.replicas, status.replicas, the selector as a string), and written back
// as a change of spec.replicas only. PATCH applies its patch to the Scale, as the real server.

import { jsonPatch, mergePatch } from "./patch.ts";
import type { Objects } from "./objects.ts";
import type { ResourceDef } from "./resources.ts";
import { errors } from "./status.ts";
import { strategicMergePatch } from "./strategic.ts";

/** built-in kinds with a /scale subresource */
export const SCALABLE = new Set(["apps/deployments", "apps/replicasets", "apps/statefulsets", "/replicationcontrollers"]);

function selectorText(sel: any, plural: string): string {
  // a ReplicationController's selector is a plain map
  const labels = plural === "replicationcontrollers" ? sel ?? {} : sel?.matchLabels ?? {};
  const parts = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
  for (const e of sel?.matchExpressions ?? []) parts.push(`${e.key} ${String(e.operator).toLowerCase()} (${(e.values ?? []).join(",")})`);
  return parts.join(",");
}

export function scaleOf(def: ResourceDef, obj: any): any {
  const { name, namespace, uid, resourceVersion, creationTimestamp } = obj.metadata;
  return {
    kind: "Scale", apiVersion: "autoscaling/v1",
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: { replicas: obj.spec?.replicas ?? 1 },
    status: { replicas: obj.status?.replicas ?? 0, selector: selectorText(obj.spec?.selector, def.plural) },
  };
}

/** GET, PUT or PATCH `.../{name}/scale` */
export function scaleRequest(objects: Objects, def: ResourceDef, version: string, ns: string, name: string, method: string, contentType: string, body: unknown): any {
  const current = objects.get(def, ns, name);
  if (method === "GET") return scaleOf(def, current);
  let wanted: any;
  if (method === "PUT") wanted = body;
  else if (method === "PATCH") {
    const scale = scaleOf(def, current);
    if (contentType === "application/merge-patch+json") wanted = mergePatch(scale, body);
    else if (contentType === "application/json-patch+json") wanted = jsonPatch(scale, body);
    else if (contentType === "application/strategic-merge-patch+json") wanted = strategicMergePatch(scale, body);
    else throw errors.unsupportedMediaType(contentType);
  } else throw errors.methodNotAllowed();
  const replicas = wanted?.spec?.replicas;
  if (!Number.isInteger(replicas) || replicas < 0) {
    throw errors.invalid("autoscaling", "Scale", name, "spec.replicas", `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`);
  }
  const rv = wanted?.metadata?.resourceVersion;
  if (rv && rv !== current.metadata.resourceVersion) throw errors.conflict(def.group, def.plural, name);
  const updated = objects.patch(def, version, ns, name, "application/merge-patch+json", { spec: { replicas } });
  return scaleOf(def, updated);
}
