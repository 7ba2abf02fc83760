// Label and field selectors as kube-apiserver parses them.
// Labels: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, joined by commas.
// Fields: `path=v`, `path==v`, `path!=v` on metadata.name / metadata.namespace (and the fields
// a few core kinds allow: an Event's, a Pod's, a Secret's type, a Namespace's phase); any other
// field is refused in the words of the kind's field-label conversion.

import { ApiStatusError } from "./status.ts";

export type LabelReq =
  | { op: "=" | "!="; key: string; value: string }
  | { op: "in" | "notin"; key: string; values: string[] }
  | { op: "exists" | "!exists"; key: string };

export type Selector = (obj: any) => boolean;

function bad(message: string): ApiStatusError {
  return new ApiStatusError(400, "BadRequest", message);
}

/** split on commas that are not inside parentheses */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out.map((p) => p.trim()).filter((p) => p.length > 0);
}

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;
const VALUE = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?)?$/;

function checkKey(k: string, raw: string): string {
  if (!KEY.test(k)) throw bad(`unable to parse requirement: found '${raw}', expected: valid label key`);
  return k;
}

function checkValue(v: string, raw: string): string {
  if (!VALUE.test(v) || v.length > 63) {
    throw bad(`unable to parse requirement: invalid label value: "${v}" in '${raw}'`);
  }
  return v;
}

export function parseLabelSelector(s: string): LabelReq[] {
  const reqs: LabelReq[] = [];
  for (const part of splitTop(s)) {
    let m: RegExpMatchArray | null;
    if ((m = part.match(/^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/))) {
      const values = (m[3] ?? "").split(",").map((v) => checkValue(v.trim(), part));
      reqs.push({ op: m[2] as "in" | "notin", key: checkKey(m[1]!, part), values });
    } else if ((m = part.match(/^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/))) {
      reqs.push({ op: m[2] === "!=" ? "!=" : "=", key: checkKey(m[1]!, part), value: checkValue(m[3] ?? "", part) });
    } else if ((m = part.match(/^!\s*(\S+)$/))) {
      reqs.push({ op: "!exists", key: checkKey(m[1]!, part) });
    } else if (KEY.test(part)) {
      reqs.push({ op: "exists", key: part });
    } else {
      throw bad(`unable to parse requirement: found '${part}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }
  return reqs;
}

export function labelMatches(reqs: LabelReq[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  for (const r of reqs) {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case "=": if (!has || v !== r.value) return false; break;
      case "!=": if (has && v === r.value) return false; break;
      case "in": if (!has || !r.values.includes(v!)) return false; break;
      case "notin": if (has && r.values.includes(v!)) return false; break;
      case "exists": if (!has) return false; break;
      case "!exists": if (has) return false; break;
    }
  }
  return true;
}

const EVENT_FIELDS = new Set([
  "involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
  "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
  "reason", "reportingComponent", "source", "type",
]);

function fieldValue(obj: any, path: string): string {
  let cur = obj;
  for (const p of path.split(".")) cur = cur == null ? undefined : cur[p];
  if (path === "source" && obj?.source) cur = obj.source.component;
  return cur == null ? "" : String(cur);
}

/** What a selector needs of a resource: its kind and group, whether a CRD serves it, its scope. */
export interface Selectable { kind: string; group: string; crdName?: string; namespaced: boolean }

/**
 * The fields a kind's field-label conversion takes, beyond metadata.name (core/v1's own conversions, the CRD
 * converter), or undefined for a kind with none (the scheme's default: metadata.name and metadata.namespace).
 */
function ownFields(def: Selectable): Set<string> | undefined {
  if (def.crdName) return new Set(def.namespaced ? ["metadata.namespace"] : []);
  if (def.group !== "") return undefined;
  switch (def.kind) {
    case "Event": return new Set(["metadata.namespace", ...EVENT_FIELDS]);
    case "Namespace": return new Set(["status.phase"]);
    case "Secret": return new Set(["metadata.namespace", "type"]);
    case "Pod": return new Set(["metadata.namespace", "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
      "spec.serviceAccountName", "status.phase", "status.podIP", "status.nominatedNodeName"]);
    case "Node": case "ReplicationController": case "Service": return new Set(["metadata.namespace"]);
    default: return undefined;
  }
}

/** kube-apiserver's refusal of a field it cannot select on: the kind's own conversion's words, or the default's */
function unknownField(def: Selectable, path: string): ApiStatusError {
  if (ownFields(def)) return bad(`field label not supported: ${path}`);
  return bad(`"${path}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
}

export function parseFieldSelector(s: string, def: Selectable): { path: string; op: "=" | "!="; value: string }[] {
  const out: { path: string; op: "=" | "!="; value: string }[] = [];
  const known = ownFields(def) ?? new Set(["metadata.namespace"]);
  for (const part of splitTop(s)) {
    const m = part.match(/^([^=!]+)(==|=|!=)(.*)$/);
    if (!m) throw bad(`invalid selector: '${s}'; can't understand '${part}'`);
    const path = m[1]!.trim();
    if (path !== "metadata.name" && !known.has(path)) throw unknownField(def, path);
    out.push({ path, op: m[2] === "!=" ? "!=" : "=", value: m[3]!.trim() });
  }
  return out;
}

/** one predicate combining both selectors (either may be absent/empty) */
export function makeSelector(
  labelSelector: string | null, fieldSelector: string | null, def: Selectable,
): Selector | undefined {
  const labels = labelSelector ? parseLabelSelector(labelSelector) : [];
  const fields = fieldSelector ? parseFieldSelector(fieldSelector, def) : [];
  if (!labels.length && !fields.length) return undefined;
  return (obj: any) => {
    if (!labelMatches(labels, obj?.metadata?.labels)) return false;
    for (const f of fields) {
      const v = fieldValue(obj, f.path);
      if (f.op === "=" ? v !== f.value : v === f.value) return false;
    }
    return true;
  };
}
