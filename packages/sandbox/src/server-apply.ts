// The HTTP side of server-side apply (`PATCH` with `application/apply-patch+yaml`): the
// fieldManager it requires, the YAML body and the kind it must name, then a create when the
// object is absent or a merge with field ownership (apply.ts) through admission when it is
// there. Kept apart from server.ts, which routes to it, since apply checks its request its own way.

import { parse as parseYaml } from "yaml";
import { applyConfiguration } from "./apply.ts";
import { applyShape } from "./apply-shape.ts";
import { objectResponse } from "./bodies.ts";
import { dryRunOf } from "./dry-run.ts";
import { reviewOptions } from "./admission-review.ts";
import { checkRequestSize } from "./limits.ts";
import type { UserInfo } from "./rbac.ts";
import { resourceKey, type ResourceDef } from "./resources.ts";
import type { ServerContext } from "./server-context.ts";
import { ApiStatusError, errors } from "./status.ts";
import { nowTimestamp, present } from "./write-bodies.ts";
import { checkStringData } from "./secret-data.ts";

/** server-side apply (apply.ts): create if absent, else merge with field ownership; 409 on conflicts */
export async function serverSideApply(
  ctx: ServerContext, req: Request, def: ResourceDef, version: string, ns: string, name: string,
  sub: "status" | undefined, q: URLSearchParams, user: UserInfo,
): Promise<Response> {
  const manager = q.get("fieldManager");
  if (!manager) {
    const required = "Required value: is required for apply patch";
    throw new ApiStatusError(422, "Invalid", `PatchOptions.meta.k8s.io "" is invalid: fieldManager: ${required}`,
      {
        group: "meta.k8s.io", kind: "PatchOptions",
        causes: [{ reason: "FieldValueRequired", message: required, field: "fieldManager" }],
      });
  }
  const dryRun = dryRunOf(q, "PatchOptions");
  const apiVersion = def.group ? `${def.group}/${version}` : version;
  const body = await applyBody(req, def, apiVersion);
  // typed before it is applied; merged into data by the update or create it becomes
  checkStringData(def, body, { via: "apply", configuration: body });
  const options = { strict: q.get("fieldValidation") === "Strict", dryRun };
  const review = (kind: "CreateOptions" | "UpdateOptions") => ({ ...options, review: reviewOptions(kind, q) });
  const applying = {
    manager, force: q.get("force") === "true", apiVersion, shape: applyShape(def, version), now: nowTimestamp(),
    ...(sub ? { subresource: sub } : {}),
  };
  const existing = ctx.store.get(resourceKey(def.group, def.plural), ns, name);
  if (existing) {
    const next = applyConfiguration(present(def, version, existing), body, applying);
    next.metadata.resourceVersion = existing.metadata.resourceVersion;
    const updated = await ctx.admission.update(def, version, ns, name, next, user, sub, review("UpdateOptions"));
    return objectResponse(req, def, await ctx.admission.present(def, version, updated));
  }
  if (sub) throw errors.notFound(def.group, def.plural, name);
  const named = { ...body, metadata: { ...(body.metadata ?? {}), name } };
  const configuration = applyConfiguration(undefined, named, applying);
  const created = await ctx.admission.create(def, version, ns, configuration, user, review("CreateOptions"));
  return objectResponse(req, def, await ctx.admission.present(def, version, created), 201);
}

/** the apply configuration the request carries: a YAML object of the resource's apiVersion and kind, or 400 */
async function applyBody(req: Request, def: ResourceDef, apiVersion: string): Promise<any> {
  const text = await req.text();
  checkRequestSize(text);
  let body: any;
  try {
    body = parseYaml(text);
  } catch (e) {
    throw errors.badRequest(`error decoding YAML: ${(e as Error).message}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw errors.badRequest("the apply patch must be an object");
  }
  if (body.apiVersion !== apiVersion || body.kind !== def.kind) {
    const got = `(got ${body.apiVersion ?? "none"}, ${body.kind ?? "none"})`;
    throw errors.badRequest(`the apply configuration must be of apiVersion ${apiVersion}, kind ${def.kind} ${got}`);
  }
  return body;
}
