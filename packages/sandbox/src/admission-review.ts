// What the sandbox sends a webhook, field by field as kube-apiserver sends it (compared on a real
// one: test/e2e/webhooks.e2e.ts): the AdmissionReview request (kind/resource of what is written,
// requestKind/requestResource alike, subResource, the name — a generateName already made into
// one —, namespace, operation, userInfo, object, oldObject, dryRun, and `options`: the write's
// CreateOptions, UpdateOptions — a patch's and an apply's too — or DeleteOptions as the client
// gave them), and the HTTP headers of its POST.

import type { UserInfo } from "./rbac.ts";
import type { ResourceDef } from "./resources.ts";

/** The headers of a review's POST as kube-apiserver's client sets them (Content-Length is fetch's). */
export const REVIEW_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, */*",
  "accept-encoding": "gzip",
  "user-agent": "kube-apiserver-admission",
} as const;

export type Operation = "CREATE" | "UPDATE" | "DELETE";

/** One write, as admission sees it. */
export interface Call {
  def: ResourceDef;
  version: string;
  ns: string;
  operation: Operation;
  object: any;
  oldObject: any;
  user: UserInfo;
  sub: string | undefined;
  /** dryRun=All: the webhooks are told (`dryRun: true`), so that they too change nothing */
  dryRun: boolean;
  /** The review's `options` (reviewOptions), when the write came from a client request. */
  options?: Record<string, unknown>;
  /** The kind of the objects when not the resource's own: autoscaling/v1 Scale for /scale. */
  kind?: { group: string; version: string; kind: string };
}

/** The AdmissionReview's request for `call`. */
export function reviewRequest(call: Call) {
  const uid = crypto.randomUUID();
  const gvr = { group: call.def.group, version: call.version, resource: call.def.plural };
  const gvk = call.kind ?? { group: call.def.group, version: call.version, kind: call.def.kind };
  const name = (call.object ?? call.oldObject)?.metadata?.name;
  return {
    uid, kind: gvk, resource: gvr, requestKind: gvk, requestResource: gvr,
    ...(call.sub ? { subResource: call.sub, requestSubResource: call.sub } : {}),
    ...(name ? { name } : {}), ...(call.ns ? { namespace: call.ns } : {}), operation: call.operation,
    userInfo: { username: call.user.name, groups: call.user.groups },
    object: call.object ?? null, oldObject: call.oldObject ?? null, dryRun: call.dryRun,
    ...(call.options ? { options: call.options } : {}),
  };
}

type OptionsKind = "CreateOptions" | "UpdateOptions" | "DeleteOptions";

/**
 * A write's options as the review carries them: `kind` and `apiVersion`, and what the client set
 * of dryRun, fieldManager and fieldValidation (a patch's PatchOptions become UpdateOptions; an
 * apply's `force` is left out, as UpdateOptions has no such field).
 */
export function reviewOptions(kind: OptionsKind, q: URLSearchParams): Record<string, unknown> {
  const dryRun = q.getAll("dryRun");
  const fieldManager = q.get("fieldManager");
  const fieldValidation = q.get("fieldValidation");
  return {
    kind, apiVersion: "meta.k8s.io/v1", ...(dryRun.length > 0 ? { dryRun } : {}),
    ...(fieldManager ? { fieldManager } : {}), ...(fieldValidation ? { fieldValidation } : {}),
  };
}

/** A DELETE's options: its body's DeleteOptions when it has one, else the query's (as kube-apiserver reads them). */
export function deleteReviewOptions(body: unknown, q: URLSearchParams): Record<string, unknown> {
  if (typeof body === "object" && body !== null && !Array.isArray(body)) {
    const { kind: _kind, apiVersion: _apiVersion, ...given } = body as Record<string, unknown>;
    return { kind: "DeleteOptions", apiVersion: "meta.k8s.io/v1", ...given };
  }
  const dryRun = q.getAll("dryRun");
  const grace = q.get("gracePeriodSeconds");
  const propagationPolicy = q.get("propagationPolicy");
  return {
    kind: "DeleteOptions", apiVersion: "meta.k8s.io/v1", ...(dryRun.length > 0 ? { dryRun } : {}),
    ...(grace !== null && grace !== "" ? { gracePeriodSeconds: Number(grace) } : {}),
    ...(propagationPolicy ? { propagationPolicy } : {}),
  };
}
