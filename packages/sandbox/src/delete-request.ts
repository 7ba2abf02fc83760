// DELETE, of one object or a collection, answered as kube-apiserver answers it: an object removed
// at once is a Status (Success, its name, group, resource and uid; the generic store's
// finalizeDelete), except for the kinds whose registry returns the deleted object (Pods,
// Services, ServiceAccounts); one only marked (finalizers) is the object. A collection's DELETE
// answers the list of the objects it selected, as they were. Kept apart from server.ts, which
// routes to it.

import { deleteReviewOptions } from "./admission-review.ts";
import { readDeleteOptions } from "./bodies.ts";
import { deleteOptionsOf } from "./delete-options.ts";
import { dryRunOf } from "./dry-run.ts";
import { listObjects } from "./list.ts";
import { checkNamespaceDeletable } from "./namespaces.ts";
import type { UserInfo } from "./rbac.ts";
import { resourceKey, type ResourceDef } from "./resources.ts";
import { makeSelector } from "./selectors.ts";
import type { ServerContext } from "./server-context.ts";
import { jsonResponse } from "./status.ts";

/** the registries with ReturnDeletedObject (and the Namespace's and CRD's deletes, which answer what they mark) */
const RETURNS_DELETED = new Set([
  "/pods", "/services", "/serviceaccounts", "/namespaces", "apiextensions.k8s.io/customresourcedefinitions",
]);

/** DELETE of one object: `out` answers with the object, when that is the answer */
export async function deleteOne(
  ctx: ServerContext, req: Request, def: ResourceDef, version: string, ns: string, name: string,
  q: URLSearchParams, user: UserInfo, out: (body: any) => Promise<Response>,
): Promise<Response> {
  const body = await readDeleteOptions(req);
  const options = deleteOptionsOf(body, q);
  const dryRun = dryRunOf(q, "DeleteOptions", body);
  const review = deleteReviewOptions(body, q);
  checkNamespaceDeletable(def, name);
  const result = await ctx.admission.delete(def, version, ns, name, options, user, dryRun, review);
  // gone (or, dry, would be): never marked, or left without finalizers (the collector's own may go at once after)
  const removed = !result.metadata.deletionTimestamp || !(result.metadata.finalizers ?? []).length;
  if (!removed || RETURNS_DELETED.has(resourceKey(def.group, def.plural))) return out(result);
  ctx.faults.clients.written(req, result);
  const details = { name, group: def.group, kind: def.plural, uid: result.metadata.uid };
  return jsonResponse({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Success",
    details: Object.fromEntries(Object.entries(details).filter(([, v]) => v)) });
}

/** DELETE on a collection: each selected object deleted as by its own DELETE; the answer lists them as they were */
export async function deleteCollection(
  ctx: ServerContext, req: Request, def: ResourceDef, version: string, ns: string, q: URLSearchParams,
): Promise<Response> {
  const selector = makeSelector(q.get("labelSelector"), q.get("fieldSelector"), def);
  const body = await readDeleteOptions(req);
  const options = deleteOptionsOf(body, q);
  const dryRun = dryRunOf(q, "DeleteOptions", body);
  const list = listObjects(ctx.store, def, version, ns, new URLSearchParams()) as { items: any[] };
  list.items = list.items.filter((item) => !selector || selector(item));
  for (const item of list.items) {
    try {
      ctx.objects.delete(def, item.metadata.namespace ?? "", item.metadata.name, options, dryRun);
    } catch { /* raced */ }
  }
  return jsonResponse(list);
}
