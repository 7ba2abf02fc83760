// kube-apiserver's validation of an Event (pkg/apis/core/validation/events.go), which reads every Event in its
// stored (core) shape, whichever API wrote it: the legacy checks for all (the involved object's namespace; with
// an eventTime, the reporting fields, action and reason); and, through events.k8s.io/v1 only, a create's
// stricter ones (an eventTime, a type of Normal or Warning, a series that adds up, none of the deprecated
// fields) and an update's (every field but the metadata and the series is immutable). Field paths are the
// stored shape's.

import { toCore } from "./event-store.ts";
import { qualifiedNameErrors } from "./label-selector.ts";
import { deepEqual } from "./patch.ts";
import type { Cause } from "./schema.ts";

const invalidValue = (field: string, value: unknown, detail: string): Cause =>
  ({ reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(value)}: ${detail}`, field });
const required = (field: string): Cause => ({ reason: "FieldValueRequired", message: "Required value", field });
const unset = (v: unknown) => v === undefined || v === null || v === "";
const bytes = (s: unknown) => Buffer.byteLength(typeof s === "string" ? s : "");

/** the length limits of an Event with eventTime, in bytes */
const LIMITS: [string, number][] = [["reportingInstance", 128], ["action", 128], ["reason", 128], ["message", 1024]];

/**
 * legacyValidateEvent: an Event without eventTime must live in its involved object's namespace (or, for a
 * cluster-scoped one, in "" or "default"); one with eventTime may only leave the involved namespace empty from
 * "default"/"kube-system", and needs the reporting fields, action and reason.
 */
function legacyCauses(ev: any, core: boolean): Cause[] {
  const ns: string = ev.metadata?.namespace ?? "";
  const involvedNs: string = ev.involvedObject?.namespace ?? "";
  const out: Cause[] = [];
  const mismatch = () =>
    out.push(invalidValue("involvedObject.namespace", involvedNs, "does not match event.namespace"));
  if (unset(ev.eventTime)) {
    if (!involvedNs) { if (ns !== "" && ns !== "default") mismatch(); }
    else if (ns !== involvedNs) mismatch();
    return out;
  }
  if (!involvedNs && ns !== "default" && ns !== "kube-system") mismatch();
  const controllerField = core ? "reportingComponent" : "reportingController";
  const controller = String(ev.reportingComponent ?? "");
  if (!controller) out.push(required(controllerField));
  for (const e of qualifiedNameErrors(controller)) out.push(invalidValue(controllerField, controller, e));
  for (const [field, limit] of LIMITS) {
    if (field !== "message" && !ev[field]) out.push(required(field));
    if (bytes(ev[field]) > limit) out.push(invalidValue(field, "", `can have at most ${limit} characters`));
  }
  return out;
}

function seriesCauses(ev: any): Cause[] {
  if (ev.series === undefined || ev.series === null) return [];
  const out: Cause[] = [];
  if (!((ev.series.count ?? 0) >= 2)) out.push(invalidValue("series.count", "", "should be at least 2"));
  if (unset(ev.series.lastObservedTime)) out.push(required("series.lastObservedTime"));
  return out;
}

/** ValidateEventCreate's rules for events.k8s.io/v1 */
function strictCreateCauses(ev: any): Cause[] {
  const out = seriesCauses(ev);
  if (unset(ev.eventTime)) out.push(required("eventTime"));
  if (ev.type !== "Normal" && ev.type !== "Warning") {
    out.push(invalidValue("type", "", `has invalid value: ${ev.type ?? ""}`));
  }
  const needsUnset = (field: string) => out.push(invalidValue(field, "", "needs to be unset"));
  if (!unset(ev.firstTimestamp)) needsUnset("firstTimestamp");
  if (!unset(ev.lastTimestamp)) needsUnset("lastTimestamp");
  if (ev.count) needsUnset("count");
  if (ev.source?.component || ev.source?.host) needsUnset("source");
  return out;
}

// (reason is checked twice there; the aggregate says it once)
const IMMUTABLE = [
  "involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count", "type",
  "eventTime", "action", "related", "reportingComponent", "reportingInstance",
];
/** the internal ObjectReference's and EventSource's Go field names (they have no JSON names) */
const REFERENCE: Record<string, string> = { kind: "Kind", namespace: "Namespace", name: "Name", uid: "UID",
  apiVersion: "APIVersion", resourceVersion: "ResourceVersion", fieldPath: "FieldPath" };
const SOURCE: Record<string, string> = { component: "Component", host: "Host" };

/** a field's value as the internal Go struct is written in a message: its references' fields by their Go names */
function goValue(field: string, value: any): string {
  const struct = (names: Record<string, string>, v: any) => v === undefined || v === null ? "null"
    : JSON.stringify(Object.fromEntries(Object.entries(names).map(([json, go]) => [go, v[json] ?? ""])));
  if (field === "involvedObject") return struct(REFERENCE, value ?? {});
  if (field === "related") return struct(REFERENCE, value);
  if (field === "source") return struct(SOURCE, value ?? {});
  if (field === "count") return String(value ?? 0);
  return JSON.stringify(value ?? (field.endsWith("Timestamp") || field === "eventTime" ? null : ""));
}

/** ValidateEventUpdate's rules for events.k8s.io/v1: a changed series is checked again; the rest is immutable */
function strictUpdateCauses(ev: any, old: any): Cause[] {
  const out = deepEqual(ev.series, old.series) ? [] : seriesCauses(ev);
  for (const field of IMMUTABLE) {
    if (deepEqual(ev[field] ?? null, old[field] ?? null)) continue;
    const path = field === "reportingComponent" ? "reportingController" : field;
    out.push({ reason: "FieldValueInvalid", message: `Invalid value: ${goValue(field, ev[field])}: field is immutable`,
      field: path });
  }
  return out;
}

/** the causes an Event written through `group`'s API fails with; `old` is the stored one an update replaces */
export function eventCauses(group: string, body: any, old: any): Cause[] {
  const core = group === "";
  const ev = core ? body : toCore(body, "new");
  const out = legacyCauses(ev, core);
  if (core) return out;
  return [...out, ...(old === undefined ? strictCreateCauses(ev) : strictUpdateCauses(ev, toCore(old, "new")))];
}
