// A timer's patch and result, written as a handler's are: results in status.<id>, status to
// /status when the resource has that subresource; fenced (fence.ts): an object gone, or made
// again under its name, drops the write.

import type { KubeObject, Resource } from "../../kube/index.ts";
import { fence, patchStatus } from "../fence.ts";
import type { PatchClient } from "../fence.ts";

export interface TimerResults {
  client: PatchClient;
  resource: Resource;
  /** The object the timer ran for, as it last saw it. */
  body: KubeObject;
  /** The timer's id: its result goes to status.<id>. */
  id: string;
  /** What the timer put into its `patch`. */
  user: Record<string, any> | undefined;
  result: unknown;
  /** The version its own writes to the object returned: /status is fenced by it. */
  newest: string | undefined;
  signal: AbortSignal;
}

/**
 * Writes them; resolves with the object as the last write answered (undefined: nothing to write, or the
 * object is gone); throws what the API server answered otherwise.
 */
export async function writeTimerResults(w: TimerResults): Promise<KubeObject | undefined> {
  const all: Record<string, any> = { ...(w.user ?? {}) };
  // null is no result (Kopf's None), as a handler's: status.<id> keeps what it had.
  if (w.result !== undefined && w.result !== null) all.status = { ...(all.status ?? {}), [w.id]: w.result };
  const { status, ...main } = all;
  const { namespace, name } = w.body.metadata;
  let after: KubeObject | undefined;
  if (status !== undefined && w.resource.statusSubresource) {
    const answer = await patchStatus(w.client, w.resource, w.body, status, w.newest, w.signal);
    if (answer === "gone") return undefined;
    after = answer;
  } else if (status !== undefined) main.status = status;
  if (Object.keys(main).length) {
    const request = { ...main, metadata: { ...main.metadata, ...fence(w.body) } };
    after = await w.client.patch(w.resource, namespace ?? null, name!, request, { signal: w.signal });
  }
  return after;
}
