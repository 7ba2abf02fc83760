// A WATCH request made into a stream (watch.ts): its query (label, field and shard selectors,
// timeoutSeconds, resourceVersion, sendInitialEvents, allowWatchBookmarks) checked as the real
// server checks it, the Accept header's view (Table, metadata only), and the chunked response.
// Kept apart from server.ts, which routes to it, since a watch answers with a stream, not a body.

import { clientOf } from "./client-faults.ts";
import { partialView } from "./partial.ts";
import type { ResourceDef } from "./resources.ts";
import { makeSelector } from "./selectors.ts";
import type { ServerContext } from "./server-context.ts";
import { shardFilter, withShards } from "./shards.ts";
import { errors } from "./status.ts";
import { toTable, wantsTable } from "./table.ts";
import { WatchStream } from "./watch.ts";

/** opens a watch of `def` in `ns` (of one object, given `name`) and answers with its stream */
export function startWatch(
  ctx: ServerContext, req: Request, def: ResourceDef, version: string, ns: string, name: string | undefined,
  q: URLSearchParams,
): Response {
  let fieldSelector = q.get("fieldSelector");
  if (name) fieldSelector = [fieldSelector, `metadata.name=${name}`].filter(Boolean).join(",");
  const selector = withShards(
    makeSelector(q.get("labelSelector"), fieldSelector, def), shardFilter(q, ctx.shardSelectors),
  );
  const timeoutRaw = q.get("timeoutSeconds");
  const timeoutSeconds = timeoutRaw ? Number(timeoutRaw) : undefined;
  if (timeoutRaw && !Number.isFinite(timeoutSeconds)) throw errors.badRequest(`invalid timeoutSeconds: ${timeoutRaw}`);
  const rvParam = q.get("resourceVersion");
  if (rvParam && !/^\d+$/.test(rvParam)) throw errors.badRequest(`invalid resource version: "${rvParam}"`);
  const sendInitialEvents = q.get("sendInitialEvents") === "true";
  const bookmarks = q.get("allowWatchBookmarks") === "true" || q.get("allowWatchBookmarks") === "1";
  if (sendInitialEvents && (q.get("resourceVersionMatch") !== "NotOlderThan" || !bookmarks)) {
    throw errors.invalid("", "ListOptions", "", "resourceVersionMatch",
      "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan and allowWatchBookmarks");
  }
  const asTable = (o: any, withColumns: boolean) =>
    toTable(def, version, [o], { resourceVersion: o.metadata.resourceVersion }, withColumns);
  const watch = new WatchStream(ctx.store, {
    def, version, ns, selector, resourceVersion: q.get("resourceVersion") ?? undefined,
    sendInitialEvents, bookmarks, bookmarkIntervalMs: ctx.bookmarkIntervalMs, timeoutSeconds,
    convert: ctx.admission.watchConverter(def, version),
    partial: partialView(req.headers.get("accept")), delays: ctx.faults.watchDelays, merges: ctx.faults.watchMerges,
    sent: ctx.faults.watchLineCounter(clientOf(req), def.plural),
    ...(wantsTable(req.headers.get("accept")) ? { asTable } : {}),
  }, (w) => ctx.watches.delete(w), req.signal);
  ctx.watches.add(watch);
  watch.begin();
  return new Response(watch.body, {
    status: 200,
    headers: {
      "content-type": "application/json", "cache-control": "no-cache, private", "transfer-encoding": "chunked",
    },
  });
}
