// dryRun=All on a write: kube-apiserver's only value, validated with the request's options
// (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions) before anything is read or
// checked, and refused word for word as it refuses any other value, together with the options'
// other faults: a fieldManager over 128 bytes or with a character that does not print, a
// fieldValidation other than Ignore, Warn or Strict, `force` on a patch that is no apply (and an
// apply without a fieldManager). What a dry run does is objects.ts's (WriteOptions.dryRun) and
// admission.ts's (the webhooks are told).

import { optionsInvalid } from "./list-options.ts";

export type OptionsKind = "CreateOptions" | "UpdateOptions" | "PatchOptions" | "DeleteOptions";

type Cause = { reason: string; message: string; field: string };

/**
 * Whether the write is a dry run, once its options are valid. A DELETE's options come from its body
 * when it has one (a DeleteOptions), else from the query, as kube-apiserver reads them.
 */
export function dryRunOf(q: URLSearchParams, kind: OptionsKind, deleteOptions?: unknown, apply = false): boolean {
  const fromBody = typeof deleteOptions === "object" && deleteOptions !== null;
  const given: unknown = fromBody ? (deleteOptions as { dryRun?: unknown }).dryRun : q.getAll("dryRun");
  const values = given === undefined || given === null ? [] : Array.isArray(given) ? given : [given];
  const causes: Cause[] = [];
  if (kind === "PatchOptions" && !apply && q.has("force")) {
    causes.push({ reason: "FieldValueForbidden", message: "Forbidden: may not be specified for non-apply patch",
      field: "force" });
  }
  if (kind === "PatchOptions" && apply && !q.get("fieldManager")) {
    causes.push({ reason: "FieldValueRequired", message: "Required value: is required for apply patch",
      field: "fieldManager" });
  }
  if (kind !== "DeleteOptions") causes.push(...fieldManagerCauses(q.get("fieldManager") ?? ""));
  if (!values.every((value) => value === "All")) {
    // apimachinery's field.NotSupported of a []string, which prints it as JSON
    const detail = `Unsupported value: ${JSON.stringify(values.map(String))}: supported values: "All"`;
    causes.push({ reason: "FieldValueNotSupported", message: detail, field: "dryRun" });
  }
  const validation = q.get("fieldValidation") ?? "";
  if (kind !== "DeleteOptions" && !["", "Ignore", "Strict", "Warn"].includes(validation)) {
    causes.push({ reason: "FieldValueNotSupported", field: "fieldValidation", message: `Unsupported value: ${
      JSON.stringify(validation)}: supported values: "", "Ignore", "Strict", "Warn"` });
  }
  if (causes.length) throw optionsInvalid(kind, causes);
  return values.length > 0;
}

/** ValidateFieldManager: at most 128 bytes, every character printable (each one that is not, at its byte) */
function fieldManagerCauses(manager: string): Cause[] {
  const out: Cause[] = [];
  if (Buffer.byteLength(manager) > 128) {
    const message = "Too long: may not be more than 128 bytes";
    out.push({ reason: "FieldValueTooLong", message, field: "fieldManager" });
  }
  let at = 0;
  for (const ch of manager) {
    if (ch !== " " && /[\p{C}\p{Z}]/u.test(ch)) {
      const code = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
      out.push({ reason: "FieldValueInvalid", field: "fieldManager",
        message: `Invalid value: ${goQuote(manager)}: invalid character U+${code} (at position ${at})` });
    }
    at += Buffer.byteLength(ch);
  }
  return out;
}

const ESCAPES: Record<string, string> = { "\x07": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
  "\t": "\\t", "\v": "\\v", "\\": "\\\\", "\"": "\\\"" };

/** Go's strconv.Quote */
function goQuote(s: string): string {
  let out = "";
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ESCAPES[ch]) out += ESCAPES[ch];
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else if (ch !== " " && /[\p{C}\p{Z}]/u.test(ch)) {
      out += code < 0x10000 ? `\\u${code.toString(16).padStart(4, "0")}` : `\\U${code.toString(16).padStart(8, "0")}`;
    } else out += ch;
  }
  return `"${out}"`;
}
