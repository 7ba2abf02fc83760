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
// Must never decide what to run (cycle.ts) or swallow errors other than 404 (gone) and 409.

import type { KubeClient } from "../kube/client.ts";
import { isConflict, isNotFound } from "../kube/errors.ts";
import type { KubeObject, Resource } from "../kube/types.ts";
import type { Logger } from "../util/log.ts";
import type { CyclePlan } from "./cycle.ts";
import { asAnnotations, asStatus, FINALIZER, hasChange, STATUS_KEY, type StorageMode } from "./progress.ts";

export type PatchClient = Pick<KubeClient, "patch" | "get">;

export interface PatchTarget {
  client: PatchClient;
  resource: Resource;
  /** Shared by all objects of the resource; patching may switch it from "status" to "annotations". */
  storage: { mode: StorageMode };
  logger: Logger;
}

/** True when the plan has anything to send. */
export function planWrites(plan: CyclePlan): boolean {
  return plan.user !== undefined || Object.keys(plan.results).length > 0 || hasChange(plan.bookkeeping) || plan.finalizer !== undefined;
}

/** Sends the plan; returns the object as the server last returned it, or "gone" on 404. */
export async function applyPlan(target: PatchTarget, body: KubeObject, plan: CyclePlan, signal: AbortSignal): Promise<KubeObject | "gone"> {
  const { resource, storage } = target;
  const sub = resource.statusSubresource;
  let main: Record<string, any> = {};
  let status: Record<string, any> = {};
  const releasing = plan.finalizer === "remove" && Boolean(body.metadata.deletionTimestamp);

  if (!plan.finalizerFirst) {
    if (plan.user) {
      const { status: userStatus, ...rest } = plan.user;
      main = rest;
      if (userStatus) status = { ...userStatus };
    }
    for (const id in plan.results) status[id] = plan.results[id];
    if (!releasing) {
      const inStatus = sub && storage.mode === "status";
      const kept = inStatus ? asStatus(plan.bookkeeping) : asAnnotations(plan.bookkeeping);
      if (kept && inStatus) status = mergeInto(status, kept.status);
      else if (kept) main = mergeInto(main, kept);
    } else status = {}; // the object is going away: its status no longer matters
    if (!sub && Object.keys(status).length) {
      main = mergeInto(main, { status });
      status = {};
    }
  }

  const { name, namespace } = body.metadata;
  const ns = namespace ?? null;
  let newest: KubeObject | undefined;

  /** The /status PATCH; on pruning, moves the bookkeeping into `main` (sent after it). */
  const sendStatus = async (): Promise<"gone" | undefined> => {
    try {
      newest = await target.client.patch(resource, ns, name!, { status }, { subresource: "status", signal });
    } catch (error) {
      if (isNotFound(error)) return "gone";
      throw error;
    }
    if (status[STATUS_KEY] && newest?.status?.[STATUS_KEY] === undefined && storage.mode === "status") {
      target.logger.warn("status.kobun was pruned by the resource's schema: keeping kobun's progress in annotations instead", {
        resource: resource.plural,
      });
      storage.mode = "annotations";
      const kept = asAnnotations(plan.bookkeeping);
      if (kept) main = mergeInto(main, kept);
    }
    return undefined;
  };

  /** The main-object PATCH (with the finalizer change if `finalizer`); 409 re-reads and recomputes. */
  const sendMain = async (finalizer: boolean): Promise<"gone" | undefined> => {
    let current = body;
    for (let attempt = 0; ; attempt++) {
      const request = { ...main };
      if (finalizer && plan.finalizer) {
        const list = current.metadata.finalizers ?? [];
        const next = plan.finalizer === "add" ? (list.includes(FINALIZER) ? null : [...list, FINALIZER]) : list.includes(FINALIZER) ? list.filter((f) => f !== FINALIZER) : null;
        if (next) request.metadata = { ...request.metadata, finalizers: next, resourceVersion: current.metadata.resourceVersion };
      }
      if (!Object.keys(request).length) return undefined;
      try {
        newest = await target.client.patch(resource, ns, name!, request, { signal });
        return undefined;
      } catch (error) {
        if (isNotFound(error)) return "gone";
        if (!isConflict(error) || attempt >= 4) throw error;
        current = await target.client.get(resource, ns, name!, { signal });
        if (plan.finalizer === "add" && current.metadata.deletionTimestamp) {
          newest = current; // too late to hold it; no new finalizers on a deleting object
          return undefined;
        }
      }
    }
  };

  // The request that carries the diff base goes last: a crash (or a failure) between the two
  // requests then leaves the base behind, and the cycle runs again (at least once), instead of
  // a base that claims the handlers' own spec/metadata patch that never reached the object.
  if (STATUS_KEY in status) {
    if ((await sendMain(true)) === "gone") return "gone";
    if ((await sendStatus()) === "gone") return "gone";
    if (Object.keys(main).length > 0 && storage.mode === "annotations") {
      // Pruned: the bookkeeping moved into `main`; the user's part of it was sent already.
      main = asAnnotations(plan.bookkeeping) ?? {};
      if ((await sendMain(false)) === "gone") return "gone";
    }
  } else {
    if (Object.keys(status).length && (await sendStatus()) === "gone") return "gone";
    if ((await sendMain(true)) === "gone") return "gone";
  }
  return newest ?? body;
}

/** Combines two patches into one; nulls are kept (they are deletions to send, not to apply here). */
function mergeInto(a: Record<string, any>, b: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...a };
  for (const key in b) {
    const bv = b[key];
    const av = out[key];
    if (bv && typeof bv === "object" && !Array.isArray(bv) && av && typeof av === "object" && !Array.isArray(av)) out[key] = mergeInto(av, bv);
    else out[key] = bv;
  }
  return out;
}
