// A WATCH request made into a stream (watch.ts): its query (label, field and shard selectors,
// timeoutSeconds, resourceVersion, sendInitialEvents, allowWatchBookmarks) checked as the real
// server checks it (list-options.ts: a watch from no resourceVersion sends its initial events,
// and with bookmarks the initial-events-end one), the Accept header's view (Table, metadata
// only), and the chunked response.
// Kept apart from server.ts, which routes to it, since a watch answers with a stream, not a body.

import { clientOf } from "./client-faults.ts";
import { partialView } from "./partial.ts";
import type { ResourceDef } from "./resources.ts";
import { queryBool, readOptions } from "./list-options.ts";
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
  const options = readOptions(q, true);
  let fieldSelector = q.get("fieldSelector");
  if (name) fieldSelector = [fieldSelector, `metadata.name=${name}`].filter(Boolean).join(",");
  const selector = withShards(
    makeSelector(q.get("labelSelector"), fieldSelector, def), shardFilter(q, ctx.shardSelectors),
  );
  const rvParam = options.resourceVersion;
  if (rvParam && !/^\d+$/.test(rvParam)) throw errors.badRequest(`invalid resource version: "${rvParam}"`);
  const bookmarks = queryBool(q.get("allowWatchBookmarks"));
  // sendInitialEvents=false from no resourceVersion (or "0"): from now on, nothing of before
  const fromNow = options.sendInitialEvents === false && (rvParam === "" || rvParam === "0");
  const resourceVersion = fromNow ? String(ctx.store.rv) : rvParam || undefined;
  const asTable = (o: any, withColumns: boolean) =>
    toTable(def, version, [o], { resourceVersion: o.metadata.resourceVersion }, withColumns);
  const watch = new WatchStream(ctx.store, {
    def, version, ns, selector, resourceVersion, sendInitialEvents: options.sendInitialEvents === true,
    bookmarks, bookmarkIntervalMs: ctx.bookmarkIntervalMs, timeoutSeconds: options.timeoutSeconds,
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
