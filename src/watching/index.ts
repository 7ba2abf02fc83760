// watching/: one resource (optionally one namespace, one label selector) as an async
// iterator of typed events. LIST (paged, or a streaming list) then WATCH from its
// resourceVersion; NDJSON split across any chunk boundary; 410 → fresh relist with
// synthetic deletions; BOOKMARKs advance the resourceVersion; non-410 ERROR → WatchError;
// unknown event types warned once and skipped; malformed lines, drops, stalls, server
// timeouts, 429/5xx → re-watch (with backoff where the server is in trouble); a line longer
// than the limit → WatchError, holding nothing of it; aborting the signal closes the socket at once.
//
// What a watcher knows it keeps on its shelf of the resource's store (caching/): the store's only
// writer, and the relist diff's memory.
//
// Files: state.ts (pure state machine), lines.ts (NDJSON), stream.ts (one socket,
// inactivity), relisting.ts (a relist as events, over the shelf), decoded.ts (what every object
// goes through), errors.ts (failure policy), pacing.ts (when to try again), streaming-list.ts
// (whether a relist is a streaming list), watcher.ts (the I/O loop), options.ts, types.ts (event
// vocabulary, WatchClient).
//
// Must never: import anything but caching/, kube/ and util/; hold more than one connection per
// watcher; leave a socket or timer behind after events() ends; end the iteration on a 410;
// write another watcher's shelf.

export { Watcher } from "./watcher.ts";
export { WatchError } from "./errors.ts";
export type { WatcherOptions } from "./options.ts";
export type { WatchClient, WatchEvent } from "./types.ts";
export { slim } from "./decoded.ts";
export { defaults } from "./options.ts";
export { type WatchObserver, type WatchRestartReason } from "./types.ts";
