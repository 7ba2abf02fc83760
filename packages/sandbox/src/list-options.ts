// A LIST's or WATCH's query as kube-apiserver reads it, in its order: the integers (limit,
// timeoutSeconds: strconv.ParseInt's refusals, 400), the selectors' syntax (400), then
// ValidateListOptions (422 ListOptions.meta.k8s.io: resourceVersionMatch only with a
// resourceVersion, never "Exact" at "0" nor with a continue token; sendInitialEvents only on a
// watch, and only with resourceVersionMatch=NotOlderThan), after a watch's defaulting
// (WatchList: a watch from no resourceVersion, or "0", sends its initial events). Booleans are
// true unless empty, "0" or "false".

import { fieldTerms, parseLabelSelector } from "./selectors.ts";
import { ApiStatusError } from "./status.ts";

/** a query flag as Go's conversion reads it */
export function queryBool(value: string | null): boolean {
  return value !== null && value !== "" && value !== "0" && value.toLowerCase() !== "false";
}

/** strconv.ParseInt(v, 10, 64), refused in its words; undefined when absent */
export function queryInt(q: URLSearchParams, name: string): number | undefined {
  const raw = q.get(name);
  if (raw === null) return undefined;
  const syntax = /^[+-]?\d+$/.test(raw);
  if (!syntax || BigInt(raw) >= 2n ** 63n || BigInt(raw) < -(2n ** 63n)) {
    const why = syntax ? "value out of range" : "invalid syntax";
    throw new ApiStatusError(400, "BadRequest", `strconv.ParseInt: parsing ${JSON.stringify(raw)}: ${why}`);
  }
  return Number(raw);
}

export interface ReadOptions {
  limit: number;
  timeoutSeconds?: number;
  resourceVersion: string;
  resourceVersionMatch: string;
  /** a watch's, after defaulting (undefined: replay from resourceVersion) */
  sendInitialEvents?: boolean;
}

type Cause = { reason: string; message: string; field: string };
const forbidden = (field: string, why: string): Cause =>
  ({ reason: "FieldValueForbidden", message: `Forbidden: ${why}`, field });
const unsupported = (value: string, supported: string[]): Cause => ({
  reason: "FieldValueNotSupported", field: "resourceVersionMatch",
  message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${
    supported.map((s) => `"${s}"`).join(", ")}`,
});

/** the 422 of ListOptions (or another meta.k8s.io options kind) that fails its validation */
export function optionsInvalid(kind: string, causes: Cause[]): ApiStatusError {
  const lines = causes.map((c) => `${c.field}: ${c.message}`);
  return new ApiStatusError(422, "Invalid",
    `${kind}.meta.k8s.io "" is invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(", ")}]`}`,
    { group: "meta.k8s.io", kind, causes });
}

/** the query of a LIST or WATCH, checked; the field selector's labels are converted by the kind's (selectors.ts) */
export function readOptions(q: URLSearchParams, watch: boolean): ReadOptions {
  const timeoutSeconds = queryInt(q, "timeoutSeconds");
  const limit = queryInt(q, "limit") ?? 0;
  const labels = q.get("labelSelector");
  if (labels) parseLabelSelector(labels);
  const fields = q.get("fieldSelector");
  if (fields) fieldTerms(fields);
  const resourceVersion = q.get("resourceVersion") ?? "";
  let resourceVersionMatch = q.get("resourceVersionMatch") ?? "";
  const sent = q.get("sendInitialEvents");
  let sendInitialEvents = sent === null ? undefined : queryBool(sent);
  if (watch && sendInitialEvents === undefined && !resourceVersionMatch && ["", "0"].includes(resourceVersion)) {
    sendInitialEvents = true;
    resourceVersionMatch = "NotOlderThan";
  }
  const causes = watch
    ? watchCauses(resourceVersionMatch, sendInitialEvents, q.get("continue"))
    : listCauses(resourceVersion, resourceVersionMatch, sendInitialEvents, q.get("continue"));
  if (causes.length) throw optionsInvalid("ListOptions", causes);
  return {
    limit: limit > 0 ? limit : 0, resourceVersion, resourceVersionMatch,
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}), ...(watch ? { sendInitialEvents } : {}),
  };
}

const MATCH = "resourceVersionMatch";
const WITH_CONTINUE = "resourceVersionMatch is forbidden when continue is provided";

function listCauses(rv: string, match: string, initial: boolean | undefined, cont: string | null): Cause[] {
  const out: Cause[] = [];
  if (match) {
    if (!rv) out.push(forbidden(MATCH, "resourceVersionMatch is forbidden unless resourceVersion is provided"));
    if (cont) out.push(forbidden(MATCH, WITH_CONTINUE));
    if (match !== "Exact" && match !== "NotOlderThan") out.push(unsupported(match, ["Exact", "NotOlderThan", ""]));
    if (match === "Exact" && rv === "0") {
      out.push(forbidden(MATCH, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`));
    }
  }
  if (initial !== undefined) out.push(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"));
  return out;
}

function watchCauses(match: string, initial: boolean | undefined, cont: string | null): Cause[] {
  const out: Cause[] = [];
  if (initial !== undefined && match !== "NotOlderThan") {
    out.push(forbidden(MATCH, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
  }
  if (match) {
    if (initial === undefined) {
      out.push(forbidden(MATCH, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"));
    }
    if (match !== "NotOlderThan") out.push(unsupported(match, ["NotOlderThan"]));
    if (cont) out.push(forbidden(MATCH, WITH_CONTINUE));
  }
  return out;
}

/** a resourceVersion the store has not reached: the watch cache's answer once it has waited for it */
export function tooLargeResourceVersion(rv: number, current: number): ApiStatusError {
  return new ApiStatusError(504, "Timeout", `Timeout: Too large resource version: ${rv}, current: ${current}`,
    { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }], retryAfterSeconds: 1 },
    1);
}

/** a GET's resourceVersion: a number (else the storage layer's 500, no reason), not one the store has not reached */
export function checkGetResourceVersion(rv: string | null, current: number): void {
  if (!rv) return;
  if (!/^\d+$/.test(rv)) {
    const detail = `strconv.ParseUint: parsing ${JSON.stringify(rv)}: invalid syntax`;
    throw new ApiStatusError(500, "", `resourceVersion: Invalid value: ${JSON.stringify(rv)}: ${detail}`);
  }
  if (Number(rv) > current) throw tooLargeResourceVersion(Number(rv), current);
}
