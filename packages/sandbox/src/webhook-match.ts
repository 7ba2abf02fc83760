// Which webhooks a write is sent to, as kube-apiserver's webhook matcher decides: a rule for its
// operation, group, version, resource and scope; then the objectSelector against the labels of
// the object or of the old object (either matching is enough; an empty selector matches all);
// then the namespaceSelector against the labels of the object's namespace. A cluster-scoped
// object other than a Namespace always passes the namespaceSelector; a Namespace is judged by its
// own labels; a namespace that does not exist is a 404, as upstream answers. Then the
// matchConditions (CEL), evaluated over the review's request (conditionsMatch).

import { parseCel } from "./cel.ts";
import { evaluate } from "./cel-eval.ts";
import { labelMatches, type LabelReq } from "./selectors.ts";
import { resourceKey, type ResourceDef } from "./resources.ts";
import { ApiStatusError } from "./status.ts";
import type { Store } from "./store.ts";

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface WebhookMatch {
  rules?: {
    operations?: string[]; apiGroups?: string[]; apiVersions?: string[]; resources?: string[]; scope?: string;
  }[];
  objectSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  matchConditions?: { name: string; expression: string }[];
}

export interface MatchedCall {
  def: ResourceDef;
  version: string;
  ns: string;
  operation: string;
  object: any;
  oldObject: any;
  sub: string | undefined;
}

const OPERATORS: Record<string, "in" | "notin" | "exists" | "!exists"> = {
  In: "in", NotIn: "notin", Exists: "exists", DoesNotExist: "!exists",
};

/** A metav1.LabelSelector as label requirements; an unknown operator is the configuration's error. */
function requirements(selector: LabelSelector | undefined): LabelReq[] {
  const reqs: LabelReq[] = Object.entries(selector?.matchLabels ?? {}).map(([key, value]) => ({ op: "=", key, value }));
  for (const e of selector?.matchExpressions ?? []) {
    const op = OPERATORS[e.operator];
    if (!op) {
      const message = `Internal error occurred: "${e.operator}" is not a valid label selector operator`;
      throw new ApiStatusError(500, "InternalError", message);
    }
    reqs.push(op === "in" || op === "notin" ? { op, key: e.key, values: e.values ?? [] } : { op, key: e.key });
  }
  return reqs;
}

const listed = (list: string[] | undefined, value: string) =>
  (list ?? []).includes("*") || (list ?? []).includes(value);

/**
 * A rule's resources as kube-apiserver matches them: "pods" the resource only, "pods/status" one of
 * its subresources, "pods/*" all of them, "*" every resource but none of their subresources.
 */
function resourceListed(resources: string[] | undefined, plural: string, sub: string | undefined): boolean {
  return (resources ?? []).some((entry) => {
    const [resource, subresource = ""] = entry.split("/", 2) as [string, string?];
    return (resource === "*" || resource === plural) && (subresource === "*" || subresource === (sub ?? ""));
  });
}

function ruled(hook: WebhookMatch, call: MatchedCall): boolean {
  return (hook.rules ?? []).some((r) =>
    listed(r.operations, call.operation) && listed(r.apiGroups, call.def.group) &&
    listed(r.apiVersions, call.version) && resourceListed(r.resources, call.def.plural, call.sub) &&
    (r.scope === undefined || r.scope === "*" || r.scope === (call.def.namespaced ? "Namespaced" : "Cluster")));
}

function objectSelected(hook: WebhookMatch, call: MatchedCall): boolean {
  const reqs = requirements(hook.objectSelector);
  if (reqs.length === 0) return true;
  return [call.object, call.oldObject].some((o) => o != null && labelMatches(reqs, o.metadata?.labels));
}

function namespaceSelected(hook: WebhookMatch, call: MatchedCall, store: Store): boolean {
  const isNamespace = call.def.group === "" && call.def.plural === "namespaces";
  if (!call.ns && !isNamespace) return true;
  const reqs = requirements(hook.namespaceSelector);
  if (reqs.length === 0) return true;
  if (isNamespace) return labelMatches(reqs, (call.object ?? call.oldObject)?.metadata?.labels);
  const namespace = store.get(resourceKey("", "namespaces"), "", call.ns);
  if (!namespace) {
    const details = { name: call.ns, kind: "namespaces" };
    throw new ApiStatusError(404, "NotFound", `namespaces "${call.ns}" not found`, details);
  }
  return labelMatches(reqs, namespace.metadata?.labels);
}

/** Whether `hook` is called for `call`. */
export function webhookMatches(hook: WebhookMatch, call: MatchedCall, store: Store): boolean {
  return ruled(hook, call) && objectSelected(hook, call) && namespaceSelected(hook, call, store);
}

/**
 * The webhook's matchConditions over the review's request, as kube-apiserver's matcher runs them:
 * one false condition skips the webhook (even when another failed to evaluate); else a condition
 * that could not be evaluated (an error, a non-boolean, or CEL beyond cel-eval.ts's subset) is an
 * error the caller judges by failurePolicy; else the webhook is called.
 */
export function conditionsMatch(hook: WebhookMatch, request: { object: unknown; oldObject: unknown }): boolean {
  const errors: string[] = [];
  for (const condition of hook.matchConditions ?? []) {
    try {
      const variables = { object: request.object, oldObject: request.oldObject, request };
      const value = evaluate(parseCel(condition.expression), variables);
      if (typeof value !== "boolean") throw new Error(`expected a bool, got ${value === null ? "null" : typeof value}`);
      if (!value) return false;
    } catch (error) {
      errors.push(`expression '${condition.expression}' resulted in error: ${(error as Error).message}`);
    }
  }
  // an aggregate of errors, as Go's utilerrors.NewAggregate words it
  if (errors.length > 0) throw new Error(errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`);
  return true;
}
