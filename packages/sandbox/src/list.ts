// LIST: its query checked (list-options.ts), selectors, stable order (namespace/name), `limit`
// + opaque `continue` tokens that carry the resourceVersion of the first page and the last key
// served; later pages are that revision's snapshot, and a token older than the history kept is
// rejected with 410 Expired, as etcd-backed servers do; so is a list at an exact resourceVersion (a paged one at a
// resourceVersion without a match is one).
// resourceVersion "0" is served whole (the watch cache pages nothing); one not reached yet, 504.

import { present } from "./write-bodies.ts";
import type { ResourceDef } from "./resources.ts";
import { fromStored, storeKey } from "./event-store.ts";
import { makeSelector } from "./selectors.ts";
import { shardFilter, withShards } from "./shards.ts";
import { readOptions, tooLargeResourceVersion } from "./list-options.ts";
import { ApiStatusError, errors } from "./status.ts";
import { decodeToken, encodeToken } from "./continue-token.ts";
import type { Store } from "./store.ts";

export function listObjects(
  store: Store, def: ResourceDef, version: string, ns: string, q: URLSearchParams, shardSelectors = true,
): unknown {
  const options = readOptions(q, false);
  const shards = shardFilter(q, shardSelectors);
  const selector = withShards(makeSelector(q.get("labelSelector"), q.get("fieldSelector"), def), shards);
  const rvParam = options.resourceVersion;
  if (rvParam && !/^\d+$/.test(rvParam)) {
    // the storage layer's ParseResourceVersion failure, answered as a Bad Request
    const detail = `strconv.ParseUint: parsing "${rvParam}": invalid syntax`;
    throw errors.badRequest(`invalid resource version: resourceVersion: Invalid value: "${rvParam}": ${detail}`);
  }
  if (Number(rvParam) > store.rv) throw tooLargeResourceVersion(Number(rvParam), store.rv);
  // "0" is the watch cache's answer, whole: it pages nothing
  const limit = rvParam === "0" ? 0 : options.limit;
  const cont = q.get("continue");
  const { rv, after } = snapshot(store, options.resourceVersionMatch, rvParam, limit, cont);
  const all = store.listAt(storeKey(def), rv, ns || undefined, after)
    ?.map(({ key, body }) => ({ key, body: fromStored(def, body) }));
  if (!all && !cont) throw new ApiStatusError(410, "Expired", "The resourceVersion for the provided list is too old.");
  if (!all) throw errors.expiredContinue(encodeToken({ v: "meta.k8s.io/v1", rv: -1, start: after ?? "" }));
  const items: unknown[] = [];
  let lastKey = "";
  let i = 0;
  for (; i < all.length; i++) {
    const { key, body } = all[i]!;
    if (selector && !selector(body)) continue;
    if (limit > 0 && items.length >= limit) break;
    // Like the real server: items of built-in kinds carry no apiVersion/kind in a LIST
    // (only the list has them); custom resources keep theirs.
    items.push(def.crdName ? present(def, version, body) : withoutTypeMeta(body));
    lastKey = key;
  }
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (limit > 0 && i < all.length) {
    const rest = all.slice(i);
    const remaining = selector ? rest.filter((x) => selector(x.body)).length : rest.length;
    if (remaining > 0) {
      metadata.continue = encodeToken({ v: "meta.k8s.io/v1", rv, start: lastKey });
      if (!selector) metadata.remainingItemCount = remaining;
    }
  }
  if (shards) metadata.shardInfo = { selector: shards.echo };
  return {
    kind: def.listKind,
    apiVersion: def.group ? `${def.group}/${version}` : version,
    metadata,
    items,
  };
}

/**
 * The revision a list is served at and the key it starts after. Later pages are served at the first page's
 * resourceVersion (a token's `rv`; -1: at the latest, the token a compacted one is answered with), rebuilt from the
 * history; once that is compacted, 410 Expired. So is a list at an exact resourceVersion; a paged one at a
 * resourceVersion without a match is one, as the storage serves it (client-go's reflector relists so from its last
 * resourceVersion, and watches on from there).
 */
function snapshot(
  store: Store, match: string, rvParam: string, limit: number, cont: string | null,
): { rv: number; after?: string } {
  if (cont && rvParam && rvParam !== "0") {
    throw errors.badRequest("specifying resource version is not allowed when using continue");
  }
  if (cont) {
    const t = decodeToken(cont);
    return { rv: t.rv >= 0 ? t.rv : store.rv, after: t.start };
  }
  const exact = match === "Exact" || (!match && limit > 0 && !!rvParam);
  return { rv: exact ? Number(rvParam) : store.rv };
}

function withoutTypeMeta(body: any): any {
  const { kind: _k, apiVersion: _a, ...rest } = body;
  return rest;
}
