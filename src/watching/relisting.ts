// A relist as the watcher's events, over its shelf of the resource's store (caching/shelf.ts), which
// keeps what the watcher knows across relists and finds what a relist did not see. Event order of
// a relist: relist-start, listed*, deleted(synthetic)*, relist-done; a consumer that replays the
// events ends with exactly the server's set.

import type { KubeObject } from "../kube/index.ts";
import type { Shelf } from "../caching/index.ts";
import type { WatchEvent } from "./types.ts";

/** One relist-start per relist (one begun again after a 410 on a page, or a streaming list given up, is the same). */
export function relistBegins(shelf: Shelf): WatchEvent[] {
  return shelf.begin() ? [{ type: "relist-start" }] : [];
}

export function listed(shelf: Shelf, object: KubeObject): WatchEvent {
  shelf.listed(object);
  return { type: "listed", object };
}

/** What was known but not seen, as synthetic deletions (each taken off as it is handed on), then relist-done. */
export function* relistDone(shelf: Shelf, resourceVersion: string): Generator<WatchEvent> {
  for (const object of shelf.finish(resourceVersion)) yield { type: "deleted", object, synthetic: true };
  yield { type: "relist-done", resourceVersion };
}
