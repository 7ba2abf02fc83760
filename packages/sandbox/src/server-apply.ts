// The HTTP side of server-side apply (`PATCH` with `application/apply-patch+yaml`): the
// fieldManager it requires, the YAML body and the kind it must name, then a create when the
// object is absent or a merge with field ownership (apply.ts) through admission when it is
// there. Kept apart from server.ts, which routes to it, since apply checks its request its own way.

import { parseKubeYaml } from "./kube-yaml.ts";
import { applyConfiguration } from "./apply.ts";
import { applyShape } from "./apply-shape.ts";
import { objectResponse } from "./bodies.ts";
import { dryRunOf } from "./dry-run.ts";
import { reviewOptions } from "./admission-review.ts";
import { checkRequestSize } from "./limits.ts";
import type { UserInfo } from "./rbac.ts";
import type { ResourceDef } from "./resources.ts";
import { fromStored, storeKey } from "./event-store.ts";
import type { ServerContext } from "./server-context.ts";
import { errors } from "./status.ts";
import { queryBool } from "./list-options.ts";
import { nowTimestamp, present, STATUS_KEEPS } from "./write-bodies.ts";
import { checkStringData } from "./secret-data.ts";

/** server-side apply (apply.ts): create if absent, else merge with field ownership; 409 on conflicts */
export async function serverSideApply(
  ctx: ServerContext, req: Request, def: ResourceDef, version: string, ns: string, name: string,
  sub: "status" | undefined, q: URLSearchParams, user: UserInfo,
): Promise<Response> {
  const dryRun = dryRunOf(q, "PatchOptions", undefined, true);
  const manager = q.get("fieldManager")!;
  const apiVersion = def.group ? `${def.group}/${version}` : version;
  const body = await applyBody(req, def, apiVersion, ns);
  // typed before it is applied; merged into data by the update or create it becomes
  checkStringData(def, body, { via: "apply", configuration: body });
  const validation = q.get("fieldValidation");
  const options = { strict: validation === "Strict", quiet: validation === "Ignore", dryRun };
  const review = (kind: "CreateOptions" | "UpdateOptions") => ({ ...options, review: reviewOptions(kind, q) });
  const applying = {
    manager, force: queryBool(q.get("force")), apiVersion, shape: applyShape(def, version), now: nowTimestamp(),
    ignored: resetFields(def, version, sub), ...(sub ? { subresource: sub } : {}),
  };
  const existing = fromStored(def, ctx.store.get(storeKey(def), ns, name));
  if (existing) {
    // a resourceVersion in the configuration is a precondition; a uid other than the stored one, an invalid change
    const rv = body.metadata?.resourceVersion;
    if (rv && rv !== existing.metadata.resourceVersion) throw errors.conflict(def.group, def.plural, name);
    const next = applyConfiguration(present(def, version, existing), body, applying);
    next.metadata.resourceVersion = existing.metadata.resourceVersion;
    const checked = ctx.objects.uidOfPatched(def, ns, name, next, sub);
    const updated = await ctx.admission.update(def, version, ns, name, checked, user, sub, review("UpdateOptions"));
    return objectResponse(req, def, await ctx.admission.present(def, version, updated));
  }
  if (sub) throw errors.notFound(def.group, def.plural, name);
  const { resourceVersion: _rv, ...metadata } = body.metadata ?? {};
  const named = { ...body, metadata: { ...metadata, name } };
  const configuration = applyConfiguration(undefined, named, applying);
  const created = await ctx.admission.create(def, version, ns, configuration, user, review("CreateOptions"));
  return objectResponse(req, def, await ctx.admission.present(def, version, created), 201);
}

/**
 * the apply configuration the request carries: a YAML object of the resource's apiVersion and kind, in the request's
 * namespace, naming no managedFields; or 400
 */
async function applyBody(req: Request, def: ResourceDef, apiVersion: string, ns: string): Promise<any> {
  const text = await req.text();
  checkRequestSize(text);
  let body: any;
  try {
    body = parseKubeYaml(text);
  } catch (e) {
    throw errors.badRequest(`error decoding YAML: ${(e as Error).message}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw errors.badRequest("the apply patch must be an object");
  }
  if (body.apiVersion !== apiVersion || body.kind !== def.kind) {
    // schema.GroupVersionKind's String()
    const given = String(body.apiVersion ?? "");
    const [group, version] = given.includes("/") ? given.split("/", 2) : ["", given];
    throw errors.badRequest(`invalid object type: ${group}/${version}, Kind=${body.kind ?? ""}`);
  }
  if (body.metadata?.managedFields !== undefined && body.metadata?.managedFields !== null) {
    throw errors.badRequest("metadata.managedFields must be nil");
  }
  const namespace = body.metadata?.namespace;
  if (def.namespaced && namespace && namespace !== ns) {
    throw errors.badRequest("the namespace of the provided object does not match the namespace sent on the request");
  }
  return body;
}

/**
 * GetResetFields of the write's strategy, as FieldsV1 paths: a main resource with a status subresource resets
 * status; its /status resets spec (and what the kind's status strategy keeps of the metadata)
 */
function resetFields(def: ResourceDef, version: string, sub: "status" | undefined): string[][] {
  if (sub !== "status") return def.statusVersions.has(version) ? [["f:status"]] : [];
  // the metadata the kind's status strategy keeps as stored (write-bodies.ts): a Deployment's labels, a Pod's owners
  const kept = def.crdName ? [] : STATUS_KEEPS[`${def.group}/${def.plural}`] ?? [];
  return [["f:spec"], ...kept.map((field) => ["f:metadata", `f:${field}`])];
}
