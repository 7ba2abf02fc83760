// Sends a cycle's plan to the API server as merge-patches: the fewest requests that are correct.
//
// - No status subresource: ONE PATCH of the object carries everything (user patch, results in
//   status.<id>, bookkeeping annotations, finalizer).
// - With a status subresource: the API server keeps only .status from a /status write and
//   ignores .status in a main-object write, so status and metadata cannot share a request.
//   kobun therefore keeps its bookkeeping in status.kobun for such resources (progress.ts):
//   a cycle that only produces results + bookkeeping (the common create) is ONE PATCH to
//   /status. A main-object PATCH is added only when the cycle changes metadata/spec too
//   (the handlers' own `patch.metadata`/`patch.spec`, or the finalizer). Order: the request
//   that carries the diff base goes last (main first when it is in status.kobun, /status
//   first when it is in annotations), so that the base is never ahead of what the handlers
//   wrote: an interrupted cycle runs again rather than being taken as done.
// - If the /status response shows status.kobun was pruned (a status schema without
//   x-kubernetes-preserve-unknown-fields), the resource switches to annotations for good
//   and the bookkeeping is re-sent to the main object at once.
// - Finalizer changes replace the whole list (merge-patch), so they carry the object's
//   resourceVersion; on 409 the object is re-read and the list recomputed.
// - Every request is fenced (fence.ts): the object's by its uid, /status by the newest version
//   known (a handler's own write's, or the main request's answer), so nothing of a deleted object
//   lands on a new one made under its name (issue 30, defect 7). A write found "gone" drops the plan.
// Must never decide what to run (cycle.ts) or swallow errors other than 404, 409 and a refused
// uid (gone, or a stale version: re-read and sent again).

import { isConflict, isNotFound } from "../kube/index.ts";
import { fence, isOtherObject, patchStatus, reread, type PatchClient } from "./fence.ts";
import { metadataOf } from "../kube/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import type { CyclePlan } from "../handling/index.ts";
import { combinePatches } from "../handling/index.ts";
import { slim } from "../watching/index.ts";
import { FINALIZER, STATUS_KEY } from "../declaring/index.ts";
import { asAnnotations, asStatus, hasChange, type StorageMode } from "../handling/index.ts";


export interface PatchTarget {
  client: PatchClient;
  resource: Resource;
  /** Shared by all objects of the resource; patching may switch it from "status" to "annotations". */
  storage: { mode: StorageMode };
  logger: Logger;
  /**
   * The resource is watched as metadata only: the answer is cut to what its watch gives, so the next cycle sees the
   * same.
   */
  metadataOnly?: boolean;
}

/** True when the plan has anything to send. */
export function planWrites(plan: CyclePlan): boolean {
  if (plan.user !== undefined || Object.keys(plan.results).length > 0) return true;
  return hasChange(plan.bookkeeping) || plan.finalizer !== undefined;
}

/** Sends the plan; returns the object as the server last returned it, or "gone" on 404. */
export async function applyPlan(
  target: PatchTarget, body: KubeObject, plan: CyclePlan, signal: AbortSignal,
): Promise<KubeObject | "gone"> {
  const { main, status } = composeRequests(target, body, plan);
  const send: Sending = { target, body, plan, signal, main, status, newest: undefined };
  // The request that carries the diff base goes last: a crash (or a failure) between the two
  // requests then leaves the base behind, and the cycle runs again (at least once), instead of
  // a base that claims the handlers' own spec/metadata patch that never reached the object.
  if (STATUS_KEY in send.status) {
    if ((await sendMain(send, true)) === "gone") return "gone";
    if ((await sendStatus(send)) === "gone") return "gone";
    if (Object.keys(send.main).length > 0 && target.storage.mode === "annotations") {
      // Pruned: the bookkeeping moved into `main`; the user's part of it was sent already.
      send.main = asAnnotations(plan.bookkeeping) ?? {};
      if ((await sendMain(send, false)) === "gone") return "gone";
    }
  } else {
    if (Object.keys(send.status).length && (await sendStatus(send)) === "gone") return "gone";
    if ((await sendMain(send, true)) === "gone") return "gone";
  }
  // The answer is the object's next body (a re-run, a re-check): without managedFields, as the
  // watch delivers it (they are left unparsed; slim is for a text the cut did not apply to).
  if (!send.newest) return body;
  const answer = slim(send.newest);
  return target.metadataOnly ? metadataOf(answer, target.resource) : answer;
}

/** One plan being sent: the two request bodies, and the object as the server last returned it. */
interface Sending {
  target: PatchTarget;
  body: KubeObject;
  plan: CyclePlan;
  signal: AbortSignal;
  main: Record<string, any>;
  status: Record<string, any>;
  newest: KubeObject | undefined;
}

/** The main-object and /status bodies of the plan (the finalizer is added per attempt, by sendMain). */
function composeRequests(
  target: PatchTarget, body: KubeObject, plan: CyclePlan,
): { main: Record<string, any>; status: Record<string, any> } {
  const sub = target.resource.statusSubresource;
  let main: Record<string, any> = {};
  let status: Record<string, any> = {};
  if (plan.finalizerFirst) return { main, status };
  if (plan.user) {
    const { status: userStatus, ...rest } = plan.user;
    main = rest;
    if (userStatus) status = { ...userStatus };
  }
  for (const id in plan.results) status[id] = plan.results[id];
  const releasing = plan.finalizer === "remove" && Boolean(body.metadata.deletionTimestamp);
  if (!releasing) {
    const inStatus = sub && target.storage.mode === "status";
    const kept = inStatus ? asStatus(plan.bookkeeping) : asAnnotations(plan.bookkeeping);
    if (kept && inStatus) status = combinePatches(status, kept.status);
    else if (kept) main = combinePatches(main, kept);
  } else status = {}; // the object is going away: its status no longer matters
  if (!sub && Object.keys(status).length) return { main: combinePatches(main, { status }), status: {} };
  return { main, status };
}

/** The /status PATCH; on pruning, moves the bookkeeping into `main` (sent after it). */
async function sendStatus(send: Sending): Promise<"gone" | undefined> {
  const { target, body, plan, signal, status } = send;
  const { resource, storage } = target;
  const newest = send.newest?.metadata.resourceVersion ?? plan.newest;
  const answer = await patchStatus(target.client, resource, body, status, newest, signal);
  if (answer === "gone") return "gone";
  send.newest = answer;
  saidPruned(target, status, answer);
  if (status[STATUS_KEY] && send.newest?.status?.[STATUS_KEY] === undefined && storage.mode === "status") {
    const message = "status.kobun was pruned by the resource's schema: keeping kobun's progress in annotations instead";
    target.logger.warn(message, { resource: resource.plural });
    storage.mode = "annotations";
    const kept = asAnnotations(plan.bookkeeping);
    if (kept) send.main = combinePatches(send.main, kept);
  }
  return undefined;
}

/** The status fields said pruned, by resource: each is said once. */
const prunedSaid = new WeakMap<Resource, Set<string>>();

/**
 * Says which fields of a /status write the answer lacks (into objects and lists of objects, a few levels deep): the
 * resource's status schema does not name them, and the API server dropped them without a word (a condition's,
 * a handler's result). status.kobun is sendStatus's own case.
 */
function saidPruned(target: PatchTarget, sent: Record<string, any>, answer: KubeObject): void {
  prunedFields(sent, answer.status ?? {}, "status", 4, (path) => {
    let said = prunedSaid.get(target.resource);
    if (!said) prunedSaid.set(target.resource, (said = new Set()));
    if (said.has(path)) return;
    said.add(path);
    const hint = path.startsWith("status.conditions") ? " (conditions.schema is theirs)" : "";
    target.logger.warn(`${path} was pruned by the resource's schema: name it in the status schema${hint}`, {
      resource: target.resource.plural,
    });
  });
}

/** Calls `found` with the path of each field of `sent` that `kept` lacks ("status.info.b", "status.list[].x"). */
function prunedFields(
  sent: Record<string, any>, kept: Record<string, any>, at: string, depth: number, found: (path: string) => void,
): void {
  for (const key in sent) {
    const [value, held] = [sent[key], kept[key]];
    // null: a deletion; status.kobun: sendStatus's own case
    if (value === null || value === undefined || (key === STATUS_KEY && at === "status")) continue;
    if (held === undefined) found(`${at}.${key}`);
    else if (depth <= 1) continue;
    else if (isObject(value) && isObject(held)) prunedFields(value, held, `${at}.${key}`, depth - 1, found);
    else if (Array.isArray(value) && Array.isArray(held)) {
      const path = `${at}.${key}[]`;
      for (let i = 0; i < value.length; i++) {
        if (isObject(value[i]) && isObject(held[i])) prunedFields(value[i], held[i], path, depth - 1, found);
      }
    }
  }
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The main-object PATCH (with the finalizer change if `finalizer`); 409 re-reads and recomputes. */
async function sendMain(send: Sending, finalizer: boolean): Promise<"gone" | undefined> {
  const { target, plan, signal } = send;
  const { name, namespace } = send.body.metadata;
  let current = send.body;
  for (let attempt = 0; ; attempt++) {
    const request = { ...send.main };
    const { finalizers, resourceVersion } = current.metadata;
    const list = finalizer && plan.finalizer ? finalizersAfter(plan.finalizer, finalizers ?? []) : null;
    if (list) request.metadata = { ...request.metadata, finalizers: list, resourceVersion };
    if (!Object.keys(request).length) return undefined;
    request.metadata = { ...request.metadata, ...fence(send.body) };
    try {
      const options = { signal, withoutManagedFields: true };
      send.newest = await target.client.patch(target.resource, namespace ?? null, name!, request, options);
      return undefined;
    } catch (error) {
      if (isNotFound(error) || isOtherObject(error)) return "gone";
      if (!isConflict(error) || attempt >= 4) throw error;
      const read = await reread(target.client, target.resource, send.body, signal);
      if (read === "gone") return "gone"; // deleted, or made again under its name
      current = read;
      if (plan.finalizer === "add" && current.metadata.deletionTimestamp) {
        send.newest = current; // too late to hold it; no new finalizers on a deleting object
        return undefined;
      }
    }
  }
}

/** The whole finalizer list after adding or removing ours (merge-patch replaces lists), or null if unchanged. */
function finalizersAfter(change: "add" | "remove", list: string[]): string[] | null {
  const has = list.includes(FINALIZER);
  if (change === "add") return has ? null : [...list, FINALIZER];
  return has ? list.filter((f) => f !== FINALIZER) : null;
}
