// Strategic merge patch for the built-in kinds, as apimachinery's strategicpatch applies it:
// maps merge recursively (null deletes), lists of objects with a patch merge key merge by that
// key (containers, env, volumes, ports...), `metadata.finalizers` merges as a set, other lists
// are replaced; directives `$patch: replace|delete`, `$deleteFromPrimitiveList/<f>`,
// `$setElementOrder/<f>` and `$retainKeys`. The merge keys come from the Go types' tags
// (k8s.io/api); the element order follows the server's: a new patch element goes before the
// server's elements it cannot be ordered against (mergeSortedSlice).

import { clone } from "./patch.ts";
import { ApiStatusError } from "./status.ts";

/** field name → its patchMergeKey, for the list fields of the kinds the sandbox serves */
const MERGE_KEYS: Record<string, string> = {
  containers: "name", initContainers: "name", ephemeralContainers: "name", env: "name", volumes: "name",
  volumeMounts: "mountPath", volumeDevices: "devicePath", imagePullSecrets: "name", hostAliases: "ip",
  ownerReferences: "uid", conditions: "type", topologySpreadConstraints: "topologyKey", resourceClaims: "name",
  secrets: "name", readinessGates: "conditionType", schedulingGates: "name",
};
/** primitive lists with patchStrategy=merge (union) */
const MERGED_SETS = new Set(["finalizers"]);

function isObj(v: unknown): v is Record<string, any> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function invalid(message: string): ApiStatusError {
  return new ApiStatusError(422, "Invalid", message, {});
}

/** the merge key of a list field; `ports` is keyed by containerPort in containers, by port in services */
export function mergeKeyOf(field: string, parentPath: string[]): string | undefined {
  if (field === "ports") return parentPath.some((p) => p.endsWith("ontainers")) ? "containerPort" : "port";
  return MERGE_KEYS[field];
}

export function strategicMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) throw invalid("strategic merge patch: the patch must be a JSON object");
  return mergeMap(isObj(target) ? clone(target) : {}, patch, []);
}

function mergeMap(
  original: Record<string, any>, patch: Record<string, any>, path: string[],
): Record<string, any> | undefined {
  if (patch.$patch === "delete") return undefined;
  if (patch.$patch === "replace") return stripDirectives(patch) as Record<string, any>;
  const out: Record<string, any> = { ...original };
  const orders = new Map<string, unknown[]>();
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith("$setElementOrder/")) { if (Array.isArray(v)) orders.set(k.slice(17), v); continue; }
    if (k.startsWith("$deleteFromPrimitiveList/")) {
      const field = k.slice(25);
      if (Array.isArray(out[field]) && Array.isArray(v)) out[field] = out[field].filter((x: unknown) => !v.includes(x));
      continue;
    }
    if (k.startsWith("$")) continue;
    if (v === null) { delete out[k]; continue; }
    const cur = out[k];
    if (isObj(v)) {
      const merged = mergeMap(isObj(cur) ? cur : {}, v, [...path, k]);
      if (merged === undefined) delete out[k]; else out[k] = merged;
    } else if (Array.isArray(v)) {
      out[k] = mergeList(k, Array.isArray(cur) ? cur : [], v, path, orders.get(k));
    } else out[k] = v;
  }
  for (const [field, order] of orders) {
    if (!(field in patch) && Array.isArray(out[field])) {
      out[field] = sortByOrder(out[field], order, mergeKeyOf(field, path));
    }
  }
  if (Array.isArray(patch.$retainKeys)) {
    for (const k of Object.keys(out)) if (!patch.$retainKeys.includes(k)) delete out[k];
  }
  return out;
}

function mergeList(field: string, original: any[], patch: any[], path: string[], order?: unknown[]): any[] {
  if (MERGED_SETS.has(field)) {
    const out = [...original];
    for (const x of patch) if (!out.includes(x)) out.push(x);
    return order ? sortByOrder(out, order, undefined) : out;
  }
  const key = mergeKeyOf(field, path);
  if (!key || !patch.every(isObj)) return stripDirectives(patch) as any[];
  if (patch.some((p) => p.$patch === "replace")) {
    return patch.filter((p) => p.$patch !== "replace").map(stripDirectives);
  }
  const deleted = new Set(patch.filter((p) => p.$patch === "delete").map((p) => p[key]));
  // each patch element merges into the first element of its key so far, as apimachinery's
  // mergeSlice does: two with one key (Service ports 53/TCP and 53/UDP by `port`) become one
  const current = original.filter((o) => !(isObj(o) && deleted.has(o[key])));
  const keys: unknown[] = [];
  for (const p of patch) {
    if (p.$patch === "delete") continue;
    if (!(key in p)) throw invalid(`map: ${JSON.stringify(p)} does not contain declared merge key: ${key}`);
    if (!keys.includes(p[key])) keys.push(p[key]);
    const i = current.findIndex((o) => isObj(o) && o[key] === p[key]);
    if (i >= 0) current[i] = mergeMap(current[i], p, [...path, field]) ?? {};
    else current.push(mergeMap({}, p, [...path, field]) ?? {});
  }
  const rank = (o: any) => (isObj(o) ? keys.indexOf(o[key]) : -1);
  const merged = current.filter((o) => rank(o) >= 0).sort((a, b) => rank(a) - rank(b));
  const serverOnly = current.filter((o) => rank(o) < 0);
  const out = mergeSorted(merged, serverOnly, original, key);
  return order ? sortByOrder(out, order, key) : out;
}

/** apimachinery's mergeSortedSlice: by server position when both are known, else the patch's element first */
function mergeSorted(left: any[], right: any[], serverOrder: any[], key: string): any[] {
  const index = (x: any) => serverOrder.findIndex((s) => isObj(s) && s[key] === x[key]);
  const out: any[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = index(left[i]);
      const ri = index(right[j]);
      if (li >= 0 && ri >= 0 && ri < li) out.push(right[j++]);
      else out.push(left[i++]);
    }
  }
  return out;
}

/** `$setElementOrder`: the listed elements in that order; unlisted ones keep their place after them */
function sortByOrder(list: any[], order: unknown[], key: string | undefined): any[] {
  const rank = (x: any) => {
    const i = order.findIndex((o) => (key ? isObj(o) && isObj(x) && o[key] === x[key] : o === x));
    return i < 0 ? order.length : i;
  };
  return list.map((x, i) => ({ x, i, r: rank(x) })).sort((a, b) => a.r - b.r || a.i - b.i).map((e) => e.x);
}

function stripDirectives(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObj(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith("$")) out[k] = stripDirectives(x);
  return out;
}
