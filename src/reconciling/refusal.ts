// Answers to a cycle's write that the same write will get again, however often it is retried:
// the object (with kobun's bookkeeping) is too large for the API server or for etcd. Retrying
// would re-run the handlers forever (nolar/kopf#1087), so the reconciler reports such a refusal
// once (a log line with the server's Status, and one Warning Event) and does not run the
// object's handlers again until the object itself changes.
// - 413 RequestEntityTooLarge: the request body is over the server's limit (3 MiB by default).
// - 422 with a FieldValueTooLong cause: e.g. `metadata.annotations: Too long: may not be more
//   than 262144 bytes` (all annotations together).
// - "etcdserver: request is too large": the stored object is over etcd's limit (~1.5 MiB), or
//   over gRPC's (~2 MiB): "rpc error: code = ResourceExhausted desc = trying to send message larger than
//   max".

import { ApiError } from "../kube/index.ts";
import type { KubeObject } from "../kube/index.ts";
import type { EventPoster } from "../posting/index.ts";
import type { Logger } from "../util/index.ts";
import { essenceOf } from "../handling/index.ts";

export function isRefusedForSize(error: unknown): error is ApiError {
  if (!(error instanceof ApiError)) return false;
  if (error.code === 413) return true;
  const causes = error.status.details?.causes ?? [];
  const tooLong = causes.some((c) => (c as { reason?: unknown })?.reason === "FieldValueTooLong");
  if (error.code === 422 && tooLong) return true;
  return /request is too large|trying to send message larger than max/i.test(error.status.message ?? "");
}

/** Identifies the object's content (not its status or bookkeeping): a refusal holds until it changes. */
export function contentKey(body: KubeObject): string {
  return Bun.hash(JSON.stringify(essenceOf(body))).toString(36);
}

export function reportRefusal(
  body: KubeObject, error: ApiError, sinks: { logger: Logger; poster?: EventPoster },
): void {
  const { namespace, name } = body.metadata;
  const { code, reason, message } = error.status;
  sinks.logger.error(
    "the API server refused the handlers' results and kobun's bookkeeping as too large; " +
      "not retrying until the object changes",
    { namespace, name, code: code ?? error.code, reason, message },
  );
  const note =
    `The API server refused to store the handlers' results: ${message ?? `HTTP ${error.code}`}. ` +
    "Handlers will run again only when the object changes.";
  sinks.poster?.post(body, "Warning", "TooLarge", note, "error");
}
