// The size limits of a real API server, with its messages, so that code which stores too much
// on an object fails against the sandbox as it would in a cluster:
// - a write request's body: 3 MiB (the apiserver's MaxRequestBodyBytes) → 413;
// - all annotations of an object together: 256 KiB of keys + values (apimachinery's
//   TotalAnnotationSizeLimitB) → 422 metadata.annotations Too long;
// - a Secret's values (decoded) or a ConfigMap's data + binaryData values: 1 MiB → 422 Too long;
// - a stored object: etcd's default --max-request-bytes, 1.5 MiB → "etcdserver: request is too
//   large". Approximated by the object's JSON size (custom resources are stored as JSON; built-in
//   types as protobuf, a little smaller, so the sandbox refuses a few built-ins slightly early).

import { invalidError } from "./schema.ts";
import { ApiStatusError } from "./status.ts";

export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;
export const MAX_STORED_OBJECT_BYTES = 1.5 * 1024 * 1024;
export const MAX_DATA_BYTES = 1024 * 1024;

export function checkRequestSize(text: string): void {
  if (Buffer.byteLength(text) > MAX_REQUEST_BODY_BYTES) {
    const message = `Request entity too large: limit is ${MAX_REQUEST_BODY_BYTES}`;
    throw new ApiStatusError(413, "RequestEntityTooLarge", message);
  }
}

/** Before storing `body` (after the write's other validation): throws what the real server answers. */
export function checkObjectSize(group: string, kind: string, body: any): void {
  const annotations: Record<string, string> = body.metadata?.annotations ?? {};
  let total = 0;
  for (const key in annotations) total += Buffer.byteLength(key) + Buffer.byteLength(String(annotations[key] ?? ""));
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) {
    const message = `Too long: may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`;
    throw invalidError(group, kind, body.metadata?.name ?? "", [
      { reason: "FieldValueTooLong", message, field: "metadata.annotations" },
    ]);
  }
  const data = dataSize(group, kind, body);
  if (data && data.bytes > MAX_DATA_BYTES) {
    const message = `Too long: may not be more than ${MAX_DATA_BYTES} bytes`;
    throw invalidError(group, kind, body.metadata?.name ?? "", [
      { reason: "FieldValueTooLong", message, field: data.field },
    ]);
  }
  if (Buffer.byteLength(JSON.stringify(body)) > MAX_STORED_OBJECT_BYTES) {
    throw new ApiStatusError(500, "", "etcdserver: request is too large");
  }
}

/** The bytes the real server counts against MAX_DATA_BYTES (values only, keys not), and the field it names. */
function dataSize(group: string, kind: string, body: any): { bytes: number; field: string } | undefined {
  if (group !== "") return undefined;
  const sum = (values: unknown, decode: boolean) => {
    let n = 0;
    for (const v of Object.values((values as Record<string, unknown>) ?? {})) {
      n += decode ? Buffer.from(String(v), "base64").length : Buffer.byteLength(String(v));
    }
    return n;
  };
  if (kind === "Secret") return { bytes: sum(body.data, true), field: "data" };
  if (kind === "ConfigMap") return { bytes: sum(body.data, false) + sum(body.binaryData, true), field: "[]" };
  return undefined;
}
