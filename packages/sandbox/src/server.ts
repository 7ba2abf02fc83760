// The HTTP front: authentication (admin token, or service-account tokens authorized by RBAC:
// see rbac.ts), fault injection, routing to discovery / LIST / WATCH /
// GET / POST / PUT / PATCH / DELETE, and turning every failure into a Status response. A WATCH
// is opened by watch-request.ts, a server-side apply answered by server-apply.ts.

import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from "./discovery.ts";
import { dryRunOf } from "./dry-run.ts";
import { mediaType, objectResponse, readJson, readObject, readPatch } from "./bodies.ts";
import { checkDecodes } from "./typed-decode.ts";
import { createdOnUpdate, createsOnUpdate } from "./preconditions.ts";
import { reviewOptions } from "./admission-review.ts";
import { deleteCollection, deleteOne } from "./delete-request.ts";
import { listObjects } from "./list.ts";
import { checkGetResourceVersion, queryBool } from "./list-options.ts";
import type { Objects } from "./objects.ts";
import type { AdmittedWrite } from "./admission.ts";
import type { ResourceDef, ResourceRegistry } from "./resources.ts";
import { openapiResponse } from "./openapi.ts";
import { openapiV2Response } from "./openapi-v2.ts";
import { AGGREGATED, aggregatedDiscovery, wantsAggregated } from "./aggregated.ts";
import { managerFromUserAgent } from "./ownership.ts";
import { answerReview } from "./reviews.ts";
import { scalePaths, scaleRequest } from "./scale.ts";
import { toTable, wantsTable } from "./table.ts";
import { partialList, partialObject, partialView } from "./partial.ts";
import { route, verbOf, type Target } from "./routing.ts";
import { serverSideApply } from "./server-apply.ts";
import { ApiStatusError, errorResponse, errors, jsonResponse } from "./status.ts";
import { clientOf } from "./client-faults.ts";
import { bearerMatches } from "./auth.ts";
import { authorize, MASTERS, requestAttributes, type UserInfo } from "./rbac.ts";
import type { WatchStream } from "./watch.ts";
import { startWatch } from "./watch-request.ts";
import { withWarnings } from "./warnings.ts";
import type { ServerContext } from "./server-context.ts";

type ResourceTarget = Extract<Target, { type: "resource" }>;
type ListBody = { metadata: Record<string, unknown>; items: any[] };

export type { ServerContext } from "./server-context.ts";


/** who is asking: a service account (by its token), else the admin (system:masters), else 401 */
function checkAuth(ctx: ServerContext, req: Request): UserInfo {
  const auth = req.headers.get("authorization") ?? "";
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1];
  const sa = bearer !== undefined ? ctx.saTokens.authenticate(bearer) : undefined;
  if (sa) return sa;
  // without a configured token, anything else is the admin (the sandbox's historical behaviour)
  if (ctx.token === undefined) return MASTERS;
  if (!bearerMatches(auth, ctx.token)) throw errors.unauthorized();
  return MASTERS;
}

export async function handle(ctx: ServerContext, req: Request): Promise<Response> {
  const started = performance.now();
  const url = new URL(req.url);
  const target = route(url.pathname);
  const q = url.searchParams;
  const resource = target.type === "resource" ? target : undefined;
  const isWatch = !!resource && (resource.legacyWatch || queryBool(q.get("watch")));
  const verb = resource ? verbOf(req.method, !!resource.name, isWatch) ?? req.method.toLowerCase() : "get";
  const plural = resource?.plural;
  const query = url.search.replace(/^\?/, "");
  ctx.requests.record({ verb, method: req.method, path: url.pathname, query, at: Date.now(), plural });
  let res = await withWarnings(async () => {
    const user = checkAuth(ctx, req);
    // system:masters may do anything: its requests skip building the RBAC attributes
    if (user !== MASTERS) authorize(ctx.store, user, requestAttributes(target, req.method, url.pathname, q));
    ctx.faults.clients.begin(req, verb, resource);
    ctx.faults.check(verb, plural);
    const stall = ctx.faults.stallFor(verb, plural, clientOf(req));
    if (stall) {
      // unserved: held only until the client gives up (then never made)
      const gaveUp = stall.unserved
        ? [new Promise<void>((resolve) => req.signal.addEventListener("abort", () => resolve(), { once: true }))]
        : [];
      await Promise.race([Bun.sleep(stall.ms), ...gaveUp]);
      if (stall.unserved && req.signal.aborted) {
        throw new ApiStatusError(504, "Timeout", "sandbox: the client gave up on a stalled request: not served");
      }
    }
    return dispatch(ctx, req, target, verb, isWatch, q, user);
  }, (e) => {
    const err = e instanceof ApiStatusError ? e
      : new ApiStatusError(500, "InternalError", `sandbox: ${(e as Error)?.message ?? String(e)}`);
    return errorResponse(err);
  });
  res = ctx.faults.clients.answer(req, res);
  const ms = (performance.now() - started).toFixed(2);
  ctx.log?.(`sandbox verb=${verb} method=${req.method} path=${url.pathname}${url.search} code=${res.status} ms=${ms}`);
  return res;
}

async function dispatch(
  ctx: ServerContext, req: Request, target: Target, verb: string, isWatch: boolean, q: URLSearchParams, user: UserInfo,
): Promise<Response> {
  if (target.type !== "resource") return nonResourceRequest(ctx, req, target, q);
  const def = ctx.registry.find(target.group, target.version, target.plural);
  if (!def) throw errors.pageNotFound();
  if (target.ns && !def.namespaced) throw errors.pageNotFound();
  const answered = await subresourceRequest(ctx, req, def, target, q, user);
  if (answered) return answered;
  if (target.sub !== undefined && (target.sub !== "status" || !def.statusVersions.has(target.version))) {
    throw errors.pageNotFound();
  }
  return resourceRequest(ctx, req, def, target, verb, isWatch, q, user);
}

/** discovery, health, version, OpenAPI: the paths that name no resource */
async function nonResourceRequest(
  ctx: ServerContext, req: Request, target: Exclude<Target, { type: "resource" }>, q: URLSearchParams,
): Promise<Response> {
  switch (target.type) {
    case "discovery":
      if (req.method !== "GET" && req.method !== "HEAD") throw errors.methodNotAllowed();
      if (target.what === "health") {
        return new Response("ok", { headers: { "content-type": "text/plain; charset=utf-8" } });
      }
      if (target.what === "version") return jsonResponse(versionInfo());
      if (wantsAggregated(req.headers.get("accept"))) {
        const headers = { "content-type": AGGREGATED, vary: "Accept" };
        return jsonResponse(aggregatedDiscovery(ctx.registry, target.what === "api"), 200, headers);
      }
      if (target.what === "api") return jsonResponse(apiVersions());
      return jsonResponse(apiGroupList(ctx.registry));
    case "group": {
      const doc = apiGroup(ctx.registry, target.group);
      if (!doc) throw errors.pageNotFound();
      return jsonResponse(doc);
    }
    case "groupVersion": {
      const doc = apiResourceList(ctx.registry, target.group, target.version);
      if (!doc) throw errors.pageNotFound();
      return jsonResponse(doc);
    }
    case "openapi": {
      if (req.method !== "GET" && req.method !== "HEAD") throw errors.methodNotAllowed();
      if (target.version === "v2" && target.rest.length === 0) return openapiV2Response(ctx.registry, req);
      const res = target.version === "v3" ? openapiResponse(ctx.registry, target.rest, req, q.get("hash")) : undefined;
      if (!res) throw errors.pageNotFound();
      return res;
    }
    case "unknown":
      throw errors.pageNotFound();
  }
}

/**
 * the requests a kind answers apart from its verbs: a service account's token, a review, /scale;
 * undefined for the rest
 */
async function subresourceRequest(
  ctx: ServerContext, req: Request, def: ResourceDef, target: ResourceTarget, q: URLSearchParams, user: UserInfo,
): Promise<Response | undefined> {
  if (def.group === "" && def.plural === "serviceaccounts" && target.sub === "token" && target.name && target.ns) {
    if (req.method !== "POST") throw errors.methodNotAllowed();
    return jsonResponse(ctx.saTokens.request(target.ns, target.name, await readJson(req)), 201);
  }
  if (def.verbs.length === 1 && def.verbs[0] === "create") {
    if (req.method !== "POST" || target.name || target.sub || target.ns) throw errors.methodNotAllowed();
    return jsonResponse(answerReview(ctx.store, def, user, await readJson(req)), 201);
  }
  const scale = target.sub === "scale" && target.name ? scalePaths(def, target.version) : undefined;
  if (scale) {
    const dryRun = req.method === "GET" ? false : dryRunOf(q, req.method === "PUT" ? "UpdateOptions" : "PatchOptions");
    const body = req.method === "GET" ? undefined : await readJson(req);
    const writer = { ...writerOf(req, q), subresource: "scale" };
    const ns = def.namespaced ? target.ns : "";
    const { version, name } = target;
    const review = { dryRun, user, options: reviewOptions("UpdateOptions", q) };
    const admit = (oldScale: any, newScale: any) => ctx.admission.scale(def, version, ns, oldScale, newScale, review);
    return jsonResponse(await scaleRequest(
      ctx.objects, def, scale, version, ns, name!, req.method, mediaType(req), body, { writer, dryRun }, admit,
    ));
  }
  return undefined;
}

/** the field manager of a write: `?fieldManager=`, else one named after the client's user agent */
function writerOf(req: Request, q: URLSearchParams): { manager: string } {
  return { manager: q.get("fieldManager") || managerFromUserAgent(req.headers.get("user-agent")) };
}

/** WATCH, and the verbs on a resource or its /status */
async function resourceRequest(
  ctx: ServerContext, req: Request, def: ResourceDef, target: ResourceTarget, verb: string, isWatch: boolean,
  q: URLSearchParams, user: UserInfo,
): Promise<Response> {
  const { version, name } = target;
  const ns = def.namespaced ? target.ns : "";
  const sub = target.sub as "status" | undefined;
  const out = async (body: any, code = 200) =>
    objectResponse(req, def, await ctx.admission.present(def, version, committed(ctx, req, verb, body)), code);
  const validation = q.get("fieldValidation"), writer = writerOf(req, q);
  const writing = (kind: "CreateOptions" | "UpdateOptions" | "PatchOptions") => ({
    strict: validation === "Strict", quiet: validation === "Ignore", writer, dryRun: dryRunOf(q, kind),
    review: reviewOptions(kind === "PatchOptions" ? "UpdateOptions" : kind, q),
  });

  if (isWatch) {
    if (req.method !== "GET") throw errors.methodNotAllowed();
    return startWatch(ctx, req, def, version, ns, name, q);
  }
  switch (verb) {
    case "list":
      if (sub) throw errors.methodNotAllowed();
      return listRequest(ctx, req, def, version, ns, q);
    case "get":
      checkGetResourceVersion(q.get("resourceVersion"), ctx.store.rv);
      return getRequest(ctx, req, def, version, ns, name!, out);
    case "create": {
      if (def.namespaced && !ns) throw errors.methodNotAllowed();
      const options = writing("CreateOptions");
      const body = await readObject(req, def.kind);
      checkDecodes(def, version, body);
      return out(await ctx.admission.create(def, version, ns, body, user, options), 201);
    }
    case "update":
      return putRequest(ctx, req, { def, version, ns, name: name!, sub }, user, writing("UpdateOptions"), q, out);
    case "patch": {
      const type = mediaType(req);
      if (type === "application/apply-patch+yaml") {
        const applied = await serverSideApply(ctx, req, def, version, ns, name!, sub, q, user);
        if (applied.status < 300) committed(ctx, req, verb, { metadata: { namespace: ns, name } });
        return applied;
      }
      const options = writing("PatchOptions");
      const patch = await readPatch(req, type);
      return out(await ctx.admission.patch(def, version, ns, name!, type, patch, user, sub, options));
    }
    case "delete":
      if (sub) throw errors.methodNotAllowed();
      return deleteOne(ctx, req, def, version, ns, name!, q, user, out);
    case "deletecollection":
      return deleteCollection(ctx, req, def, version, ns, q);
    default:
      throw errors.methodNotAllowed();
  }
}

/** PUT: an update, or the create (201) of a missing object of a kind whose PUT may create one */
async function putRequest(
  ctx: ServerContext, req: Request, at: { def: ResourceDef; version: string; ns: string; name: string; sub?: "status" },
  user: UserInfo, options: AdmittedWrite, q: URLSearchParams, out: (body: any, code?: number) => Promise<Response>,
): Promise<Response> {
  const { def, version, ns, name, sub } = at;
  const body = await readObject(req, def.kind);
  checkDecodes(def, version, body);
  if (sub || !createsOnUpdate(def) || ctx.objects.has(def, ns, name)) {
    return out(await ctx.admission.update(def, version, ns, name, body, user, sub, options));
  }
  const creating = { ...options, review: reviewOptions("CreateOptions", q) };
  return out(await ctx.admission.create(def, version, ns, createdOnUpdate(name, body), user, creating), 201);
}

/** GET of one object: whole (`out`), as metadata only, or as a Table row, as the Accept header asks */
async function getRequest(
  ctx: ServerContext, req: Request, def: ResourceDef, version: string, ns: string, name: string,
  out: (body: any) => Promise<Response>,
): Promise<Response> {
  const obj = ctx.objects.get(def, ns, name);
  const view = partialView(req.headers.get("accept"));
  if (view) return jsonResponse(partialObject(def, await ctx.admission.present(def, version, obj), view));
  return wantsTable(req.headers.get("accept")) ? jsonResponse(toTable(def, version, [obj])) : out(obj);
}

/** a write's object, told first to the client faults (it may be a killed client's last write); a read's as it is */
function committed<T>(ctx: ServerContext, req: Request, verb: string, object: T): T {
  if (verb !== "get") ctx.faults.clients.written(req, object);
  return object;
}

/** LIST: the items at the version asked for, as the list, its metadata only (PartialObjectMetadataList) or a Table */
async function listRequest(
  ctx: ServerContext, req: Request, def: ResourceDef, version: string, ns: string, q: URLSearchParams,
): Promise<Response> {
  const list = listObjects(ctx.store, def, version, ns, q, ctx.shardSelectors) as ListBody;
  list.items = await ctx.admission.listItems(def, version, list.items);
  const view = partialView(req.headers.get("accept"));
  if (view) return jsonResponse(partialList(def, list, view));
  if (wantsTable(req.headers.get("accept"))) return jsonResponse(toTable(def, version, list.items, list.metadata));
  return jsonResponse(list);
}
