// Every write kobun makes for an object is fenced, so that nothing of a deleted object ever lands
// on a new one made under its name (issue 30, defect 7), with no request more when nobody else
// writes the object meanwhile:
// - a PATCH of the object carries its uid (`metadata.uid`): kube-apiserver refuses another uid
//   as a change of an immutable field (422 Invalid, cause `metadata.uid`); a PATCH of a missing
//   object is a 404;
// - a PATCH of /status carries the object's newest resourceVersion known (the server ignores a
//   uid there: its status strategy keeps the stored metadata): a 409 re-reads the object, which
//   is gone if missing or of another uid, and else is sent again on the version read, with the
//   conditions another writer added meanwhile kept (a merge patch replaces the list whole).
// Such a write's "gone" is final: the caller drops it, no retry loop, no error.

import { ApiError, isConflict, isNotFound } from "../kube/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import type { KubeClient } from "../kube/index.ts";

/** What the writes of a cycle need of the client: patch, and get to re-read after a conflict. */
export type PatchClient = Pick<KubeClient, "patch" | "get">;

/** How often a /status write is sent again on a newer version before its conflict is an error. */
const STATUS_ATTEMPTS = 5;

/**
 * The fence of a PATCH of the object: its uid in the request's metadata (none if it has none, as a test's bare
 * object).
 */
export function fence(body: KubeObject): { uid?: string } {
  const uid = body.metadata.uid;
  return uid ? { uid } : {};
}

/** Whether the server refused a write for the uid it carried: the object is not the one the write was for. */
export function isOtherObject(error: unknown): boolean {
  if (!(error instanceof ApiError) || error.code !== 422) return false;
  return ((error.status.details?.causes ?? []) as { field?: string }[]).some((cause) => cause.field === "metadata.uid");
}

/** The object `body` is as the server has it now, or "gone" if missing or made again under its name. */
export async function reread(
  client: PatchClient, resource: Resource, body: KubeObject, signal: AbortSignal,
): Promise<KubeObject | "gone"> {
  const { name, namespace } = body.metadata;
  const current = await client
    .get(resource, namespace ?? null, name!, { signal, withoutManagedFields: true })
    .catch((e) => (isNotFound(e) ? null : Promise.reject(e)));
  return current && current.metadata.uid === body.metadata.uid ? current : "gone";
}

/**
 * PATCHes `status` into /status of `body`'s object, fenced by `resourceVersion` (the newest known
 * version of it; default the body's): the server's answer, or "gone".
 */
export async function patchStatus(
  client: PatchClient, resource: Resource, body: KubeObject, sent: Record<string, any>,
  resourceVersion: string | undefined, signal: AbortSignal,
): Promise<KubeObject | "gone"> {
  let status = sent;
  const { name, namespace } = body.metadata;
  let version = resourceVersion ?? body.metadata.resourceVersion;
  for (let attempt = 1; ; attempt++) {
    try {
      const request = { metadata: { resourceVersion: version }, status };
      const options = { subresource: "status", signal, withoutManagedFields: true } as const;
      return await client.patch(resource, namespace ?? null, name!, request, options);
    } catch (error) {
      if (isNotFound(error)) return "gone";
      if (!isConflict(error) || attempt >= STATUS_ATTEMPTS) throw error;
      const current = await reread(client, resource, body, signal);
      if (current === "gone") return "gone";
      version = current.metadata.resourceVersion;
      status = withTheirConditions(status, body, current);
    }
  }
}

type Condition = { type?: unknown };

/**
 * `status` to send again after a conflict: a merge patch replaces `conditions` whole, so the conditions another
 * writer added since `body` was read (a type neither `body` nor `status` has) are kept beside ours; a type we send
 * is ours, and one we left out of what we read stays left out.
 */
export function withTheirConditions(
  status: Record<string, any>, body: KubeObject, current: KubeObject,
): Record<string, any> {
  const ours = status.conditions;
  const theirs = (current.status as { conditions?: unknown } | undefined)?.conditions;
  if (!Array.isArray(ours) || !Array.isArray(theirs)) return status;
  const read = (body.status as { conditions?: unknown } | undefined)?.conditions;
  const known = new Set([...ours, ...(Array.isArray(read) ? read : [])].map((c: Condition) => c?.type));
  const added = theirs.filter((c: Condition) => !known.has(c?.type));
  return added.length ? { ...status, conditions: [...ours, ...added] } : status;
}
