// The apps/v1 workloads' rules on their selector and replicas, as kube-apiserver's validation words them
// (ValidateDeploymentSpec, ValidateReplicaSetSpec, ValidateDaemonSetSpec, ValidateStatefulSetSpec and their
// updates): replicas not negative; a selector given (but a DaemonSet's) and not empty; the template's labels
// matched by it; on update, the selector unchanged. A reconciler that changes a Deployment's selector, or builds a
// template its selector does not match, is refused here as on a cluster. The rest of these kinds' validation (the
// pod template's, a selector's own operators and values) is not done: a selector this cannot read is not judged.

import { labelMatches, type LabelReq } from "./label-selector.ts";
import { deepEqual } from "./patch.ts";
import type { ResourceDef } from "./resources.ts";
import type { Cause } from "./schema.ts";

/** each kind's word in "empty selector is invalid for …" (a ReplicaSet's reuses the Deployment's) */
const WORKLOADS: Record<string, string> = {
  deployments: "deployment", replicasets: "deployment", daemonsets: "daemonset", statefulsets: "statefulset",
};
const OPERATORS: Record<string, "in" | "notin" | "exists" | "!exists"> = {
  In: "in", NotIn: "notin", Exists: "exists", DoesNotExist: "!exists",
};

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
const invalid = (field: string, value: string, why: string): Cause =>
  ({ reason: "FieldValueInvalid", message: `Invalid value: ${value}: ${why}`, field });

/** a Go map as json.Marshal writes it: keys sorted */
const goMap = (m: unknown): string => !isObj(m) ? "null"
  : JSON.stringify(Object.fromEntries(Object.keys(m).sort().map((k) => [k, m[k]])));

/** a metav1.LabelSelector as json.Marshal writes it: its struct's order, omitempty */
function goSelector(s: any): string {
  const labels = isObj(s?.matchLabels) && Object.keys(s.matchLabels).length
    ? `"matchLabels":${goMap(s.matchLabels)}`
    : "";
  const expressions = Array.isArray(s?.matchExpressions) && s.matchExpressions.length
    ? `"matchExpressions":${JSON.stringify(s.matchExpressions.map((e: any) => ({
      key: e?.key, operator: e?.operator, ...(e?.values?.length ? { values: e.values } : {}),
    })))}`
    : "";
  return `{${[labels, expressions].filter(Boolean).join(",")}}`;
}

/** the selector's requirements, or undefined when this cannot read it (left to a cluster to judge) */
function requirements(s: any): LabelReq[] | undefined {
  const reqs: LabelReq[] = Object.entries<any>(s?.matchLabels ?? {}).map(([key, value]) => ({ op: "=", key, value }));
  for (const e of s?.matchExpressions ?? []) {
    const op = OPERATORS[e?.operator];
    const values: unknown[] = Array.isArray(e?.values) ? e.values : [];
    if (!op || (op === "in" || op === "notin") !== values.length > 0) return undefined;
    reqs.push(op === "in" || op === "notin" ? { op, key: e.key, values: values.map(String) } : { op, key: e.key });
  }
  return reqs;
}

/** what an apps/v1 workload's create or update breaks of these rules, in the real server's order */
export function workloadCauses(def: ResourceDef, body: any, old: any): Cause[] {
  const word = def.group === "apps" ? WORKLOADS[def.plural] : undefined;
  if (!word) return [];
  const out: Cause[] = [];
  const spec = isObj(body?.spec) ? body.spec : {};
  const selector = spec.selector;
  if (typeof spec.replicas === "number" && spec.replicas < 0) {
    out.push(invalid("spec.replicas", String(spec.replicas), "must be greater than or equal to 0"));
  }
  const empty = isObj(selector) && !Object.keys(selector.matchLabels ?? {}).length
    && !(selector.matchExpressions ?? []).length;
  if (selector == null && word !== "daemonset") {
    out.push({ reason: "FieldValueRequired", message: "Required value", field: "spec.selector" });
  } else if (empty) {
    out.push(invalid("spec.selector", "{}", `empty selector is invalid for ${word}`));
  }
  // a missing selector selects nothing
  const reqs = selector == null ? [{ op: "in", key: "", values: [] } as LabelReq] : requirements(selector);
  const labels = spec.template?.metadata?.labels;
  if (!empty && reqs && !labelMatches(reqs, labels)) {
    out.push(invalid("spec.template.metadata.labels", goMap(labels), "`selector` does not match template `labels`"));
  }
  if (old !== undefined && !deepEqual(selector ?? null, old.spec?.selector ?? null)) {
    const immutable = invalid("spec.selector", goSelector(selector), "field is immutable");
    // ValidateDaemonSetUpdate checks its update's rules before the spec; the others after
    if (word === "daemonset") out.unshift(immutable); else out.push(immutable);
  }
  return out;
}
