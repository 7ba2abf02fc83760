// dryRun=All on a write: kube-apiserver's only value, validated with the request's options
// (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions) before anything is read or
// checked, and refused word for word as it refuses any other value. What a dry run does is
// objects.ts's (WriteOptions.dryRun) and admission.ts's (the webhooks are told).

import { ApiStatusError } from "./status.ts";

export type OptionsKind = "CreateOptions" | "UpdateOptions" | "PatchOptions" | "DeleteOptions";

/**
 * Whether the write is a dry run. A DELETE's options come from its body when it has one (a
 * DeleteOptions), else from the query, as kube-apiserver reads them.
 */
export function dryRunOf(q: URLSearchParams, kind: OptionsKind, deleteOptions?: unknown): boolean {
  const fromBody = typeof deleteOptions === "object" && deleteOptions !== null;
  const given: unknown = fromBody ? (deleteOptions as { dryRun?: unknown }).dryRun : q.getAll("dryRun");
  const values = given === undefined || given === null ? [] : Array.isArray(given) ? given : [given];
  if (values.every((value) => value === "All")) return values.length > 0;
  // apimachinery's field.NotSupported of a []string, which prints it as JSON
  const detail = `Unsupported value: ${JSON.stringify(values.map(String))}: supported values: "All"`;
  throw new ApiStatusError(422, "Invalid", `${kind}.meta.k8s.io "" is invalid: dryRun: ${detail}`, {
    name: "", group: "meta.k8s.io", kind,
    causes: [{ reason: "FieldValueNotSupported", message: detail, field: "dryRun" }],
  });
}
