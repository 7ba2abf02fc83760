// One AdmissionReview v1, answered by one validating or mutating handler: the request is
// read and checked, the handler runs with the webhook's timeout, and every outcome becomes an
// AdmissionReview response (never an HTTP error): allowed; refused with the handler's
// AdmissionError; refused with a generic message when it crashed (details only in the log);
// cut at the timeout (then the failurePolicy decides, as the API server would).

import { fieldPath, getField, matchMeta, matchValue, PRESENT } from "../declaring/index.ts";
import { selectorMatches, type WebhookSpec } from "../declaring/index.ts";
import {
  AdmissionError, type AdmissionContext, type AdmissionPeer, type AdmissionRequest, type JsonPatchOperation,
} from "../declaring/index.ts";
import type { KubeObject } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import { jsonPatchBetween } from "./jsonpatch.ts";

export const DEFAULT_TIMEOUT_SECONDS = 10;

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; message: string; reason?: string };
  warnings?: string[];
  patchType?: "JSONPatch";
  patch?: string;
}

export interface AdmissionReviewBody {
  apiVersion: "admission.k8s.io/v1";
  kind: "AdmissionReview";
  response: AdmissionResponse;
}

/** A body that is not an AdmissionReview v1 request: the HTTP layer answers 400 with this message. */
export class BadReviewError extends Error {}

export function readAdmissionRequest(body: unknown): AdmissionRequest {
  const review = body as { apiVersion?: unknown; kind?: unknown; request?: any } | null;
  if (typeof review !== "object" || review === null || review.kind !== "AdmissionReview") {
    throw new BadReviewError("expected an AdmissionReview");
  }
  if (review.apiVersion !== "admission.k8s.io/v1") {
    const got = JSON.stringify(review.apiVersion);
    throw new BadReviewError(`expected admission.k8s.io/v1 (set admissionReviewVersions: ["v1"]), got ${got}`);
  }
  const request = review.request;
  const complete = typeof request === "object" && request !== null
    && typeof request.uid === "string" && typeof request.operation === "string";
  if (!complete) throw new BadReviewError("the AdmissionReview has no request with a uid and an operation");
  return request as AdmissionRequest;
}

/** The time the handler gets: a little under the API server's, so that our answer arrives first. */
export function handlerBudgetMs(timeoutSeconds: number): number {
  const ms = timeoutSeconds * 1000;
  return ms - Math.min(500, ms / 4);
}

/** Who called, as the HTTP layer saw it: the request's headers and the verified client certificate. */
export interface Caller {
  headers: Readonly<Record<string, string>>;
  peer: AdmissionPeer | null;
}

/** Answers `request` with `webhook`'s handler; never throws. */
export async function admit(
  webhook: WebhookSpec, request: AdmissionRequest, caller: Caller, logger: Logger,
): Promise<AdmissionReviewBody> {
  const answer = (response: Omit<AdmissionResponse, "uid">): AdmissionReviewBody =>
    ({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: request.uid, ...response } });
  const object = (request.operation === "DELETE" ? request.oldObject : request.object) ?? undefined;
  if (!applies(webhook, request, object)) return answer({ allowed: true });
  const timeoutSeconds = webhook.options.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  const log = logger.child({
    webhook: webhook.id, operation: request.operation,
    ...(request.namespace ? { namespace: request.namespace } : {}), ...(request.name ? { name: request.name } : {}),
  });
  const before = structuredClone(object ?? ({} as KubeObject));
  const cut = new AbortController();
  const ctx: AdmissionContext = {
    request, operation: request.operation, object: structuredClone(before), oldObject: request.oldObject ?? undefined,
    userInfo: request.userInfo ?? {}, dryRun: request.dryRun === true, subresource: request.subResource,
    name: request.name, namespace: request.namespace, logger: log, signal: cut.signal, warnings: [],
    headers: caller.headers, peer: caller.peer,
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), handlerBudgetMs(timeoutSeconds));
  });
  try {
    const result = await Promise.race([Promise.resolve().then(() => webhook.fn(ctx as never)), timedOut]);
    const warnings = ctx.warnings.length > 0 ? { warnings: [...ctx.warnings] } : {};
    if (result === "timeout") {
      cut.abort(new DOMException(`timed out after ${timeoutSeconds}s`, "TimeoutError"));
      const message = `admission handler ${webhook.id} did not answer within its timeout (${timeoutSeconds}s)`;
      const failurePolicy = webhook.options.failurePolicy ?? "Fail";
      log.error("admission handler timed out", { timeoutSeconds, failurePolicy });
      const ignored = `${message}; ignored (failurePolicy: Ignore)`;
      if (failurePolicy === "Ignore") return answer({ allowed: true, warnings: [...ctx.warnings, ignored] });
      return answer({ allowed: false, status: { code: 504, reason: "Timeout", message } });
    }
    if (webhook.kind === "validate" || request.operation === "DELETE") return answer({ allowed: true, ...warnings });
    const patch = Array.isArray(result) ? (result as JsonPatchOperation[]) : jsonPatchBetween(before, ctx.object);
    if (patch.length === 0) return answer({ allowed: true, ...warnings });
    log.debug("mutated", { operations: patch.length });
    const encoded = Buffer.from(JSON.stringify(patch)).toString("base64");
    return answer({ allowed: true, ...warnings, patchType: "JSONPatch", patch: encoded });
  } catch (error) {
    return answer(refusal(webhook, error, ctx.warnings, log));
  } finally {
    clearTimeout(timer);
  }
}

/** A handler that threw: refused with its AdmissionError, or with a generic message when it crashed. */
function refusal(
  webhook: WebhookSpec, error: unknown, handlerWarnings: readonly string[], log: Logger,
): Omit<AdmissionResponse, "uid"> {
  if (error instanceof AdmissionError) {
    log.info("refused", { message: error.message });
    const warnings = [...handlerWarnings, ...error.warnings];
    const status = { code: error.code, message: error.message };
    return { allowed: false, status, ...(warnings.length > 0 ? { warnings } : {}) };
  }
  // The handler's own message may hold what the user must not see: it goes only to the log.
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  log.error("admission handler failed", { error: detail });
  const message = `admission handler ${webhook.id} failed; the operator's log has the details`;
  return { allowed: false, status: { code: 403, reason: "Forbidden", message } };
}

/**
 * The webhook's own filters: its resource, subresources, operations, label/annotation matchers and
 * field value (Kopf's `field=`/`value=`: the field must exist, or match `value`).
 */
function applies(webhook: WebhookSpec, request: AdmissionRequest, object: KubeObject | undefined): boolean {
  const { options } = webhook;
  const { group, version, resource } = request.resource ?? {};
  const asked = { group: group ?? "", version: version ?? "", plural: resource ?? "", kind: request.kind?.kind ?? "" };
  if (!selectorMatches(webhook.wanted, asked)) return false;
  const sub = request.subResource;
  if (sub && !(options.subresources ?? []).some((s) => s === "*" || s === sub)) return false;
  if (!(options.operations ?? ["CREATE", "UPDATE"]).includes(request.operation)) return false;
  const meta = object?.metadata;
  if (!matchMeta(options.labels, meta?.labels) || !matchMeta(options.annotations, meta?.annotations)) return false;
  if (options.field === undefined) return true;
  return matchValue(options.value ?? PRESENT, getField(object, fieldPath(options.field)));
}
