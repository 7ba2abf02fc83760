// LIST: selectors, stable order (namespace/name), `limit` + opaque `continue` tokens that
// carry the resourceVersion of the first page and the last key served; later pages are that
// revision's snapshot, and a token older than the history kept is rejected with 410 Expired, as
// etcd-backed servers do.

import { present } from "./write-bodies.ts";
import { resourceKey, type ResourceDef } from "./resources.ts";
import { makeSelector } from "./selectors.ts";
import { shardFilter, withShards } from "./shards.ts";
import { errors } from "./status.ts";
import type { Store } from "./store.ts";

interface ContinueToken { v: string; rv: number; start: string }

function encodeToken(t: ContinueToken): string {
  return Buffer.from(JSON.stringify(t)).toString("base64url");
}

function decodeToken(s: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(s, "base64url").toString("utf8"));
    const valid = t?.v === "meta.k8s.io/v1" && typeof t.rv === "number" && typeof t.start === "string";
    if (!valid) throw new Error("bad token");
    return t;
  } catch {
    throw errors.badRequest(
      `continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)`,
    );
  }
}

export function listObjects(
  store: Store, def: ResourceDef, version: string, ns: string, q: URLSearchParams, shardSelectors = true,
): unknown {
  const shards = shardFilter(q, shardSelectors);
  const selector = withShards(makeSelector(q.get("labelSelector"), q.get("fieldSelector"), def), shards);
  const limitRaw = q.get("limit");
  const limit = limitRaw ? Number(limitRaw) : 0;
  if (limitRaw && (!Number.isInteger(limit) || limit < 0)) throw errors.badRequest(`invalid limit: ${limitRaw}`);
  const rvParam = q.get("resourceVersion");
  if (rvParam && !/^\d+$/.test(rvParam)) {
    // the storage layer's ParseResourceVersion failure, answered as a Bad Request
    const detail = `strconv.ParseUint: parsing "${rvParam}": invalid syntax`;
    throw errors.badRequest(`resourceVersion: Invalid value: "${rvParam}": ${detail}`);
  }
  // Later pages are served at the first page's resourceVersion (a token's `rv`; -1: at the latest, the token a
  // compacted one is answered with), rebuilt from the history; once that is compacted, 410 Expired.
  let rv = store.rv;
  let after: string | undefined;
  const cont = q.get("continue");
  if (cont) {
    const t = decodeToken(cont);
    if (t.rv >= 0) rv = t.rv;
    after = t.start;
  }
  const all = store.listAt(resourceKey(def.group, def.plural), rv, ns || undefined, after);
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

function withoutTypeMeta(body: any): any {
  const { kind: _k, apiVersion: _a, ...rest } = body;
  return rest;
}
