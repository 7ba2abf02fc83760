// Label and field selectors as kube-apiserver parses them. Labels: label-selector.ts.
// Fields: `path=v`, `path==v`, `path!=v` on metadata.name / metadata.namespace (and the fields
// a few kinds allow: an Event's, core or events.k8s.io, a Pod's, a Secret's type, a Namespace's
// phase), values escaped with `\`; any other field is refused in the words of the kind's
// field-label conversion.

import { ApiStatusError } from "./status.ts";

import { labelMatches, parseLabelSelector } from "./label-selector.ts";

export type { LabelReq } from "./label-selector.ts";
export { labelMatches, parseLabelSelector };

export type Selector = (obj: any) => boolean;

function bad(message: string): ApiStatusError {
  return new ApiStatusError(400, "BadRequest", message);
}

const EVENT_FIELDS = [
  "involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
  "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
  "reason", "reportingComponent", "source", "type",
];
/** events.k8s.io/v1's field-label conversion: its names, read from its own shape of the Event */
const NEW_EVENT_FIELDS = [
  "regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid", "regarding.apiVersion",
  "regarding.resourceVersion", "regarding.fieldPath", "reason", "reportingController", "type", "metadata.namespace",
];

function fieldValue(obj: any, path: string): string {
  let cur = obj;
  for (const p of path.split(".")) cur = cur == null ? undefined : cur[p];
  // a core Event's source: its source.component, else its reporting controller (the internal field both share)
  if (path === "source") cur = obj?.source?.component || obj?.reportingComponent;
  return cur == null ? "" : String(cur);
}

/** What a selector needs of a resource: its kind and group, whether a CRD serves it, its scope. */
export interface Selectable { kind: string; group: string; crdName?: string; namespaced: boolean }

/**
 * The fields a kind's field-label conversion takes, beyond metadata.name (core/v1's own conversions, the CRD
 * converter, events.k8s.io's), or undefined for a kind with none (the scheme's default: metadata.name and
 * metadata.namespace).
 */
function ownFields(def: Selectable): Set<string> | undefined {
  if (def.crdName) return new Set(def.namespaced ? ["metadata.namespace"] : []);
  if (def.group === "events.k8s.io" && def.kind === "Event") return new Set(NEW_EVENT_FIELDS);
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

/** fields.splitTerms: on the commas no backslash escapes */
function splitTerms(s: string): string[] {
  const out: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < s.length; i++) {
    if (escaped) escaped = false;
    else if (s[i] === "\\") escaped = true;
    else if (s[i] === ",") { out.push(s.slice(start, i)); start = i + 1; }
  }
  out.push(s.slice(start));
  return out;
}

/** fields.UnescapeValue: `\\`, `\,` and `\=` are the characters; a bare `,` or `=` is refused */
function unescapeValue(v: string): string {
  let out = "";
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c === "\\") {
      const next = v[++i];
      if (next === "\\" || next === "," || next === "=") out += next;
      else throw bad(`invalid field selector: invalid escape sequence: \\${next ?? ""}`);
    } else if (c === "," || c === "=") {
      throw bad(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else out += c;
  }
  return out;
}

type FieldReq = { path: string; op: "=" | "!="; value: string };

/** Go's order of strings: by their UTF-8 bytes (JavaScript's sort() goes by UTF-16 units: 𝒳 before Ａ) */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * fields.ParseSelector: terms sorted (by bytes), each split at its first `!=`, `==` or `=`, nothing trimmed; the
 * operator found by position in the string, whatever characters come before it
 */
export function fieldTerms(s: string): FieldReq[] {
  const out: FieldReq[] = [];
  for (const part of splitTerms(s).sort(byBytes)) {
    if (!part) continue;
    const at = part.search(/!=|==|=/);
    if (at < 0) throw bad(`invalid selector: '${s}'; can't understand '${part}'`);
    const op = /^(!=|==|=)/.exec(part.slice(at))![1]!;
    const value = unescapeValue(part.slice(at + op.length));
    out.push({ path: part.slice(0, at), op: op === "!=" ? "!=" : "=", value });
  }
  return out;
}

/** fieldTerms, then the kind's field-label conversion of each term in that order */
export function parseFieldSelector(s: string, def: Selectable): FieldReq[] {
  const out = fieldTerms(s);
  const known = ownFields(def) ?? new Set(["metadata.namespace"]);
  for (const { path } of out) if (path !== "metadata.name" && !known.has(path)) throw unknownField(def, path);
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
