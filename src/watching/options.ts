// WatcherOptions: what a watcher can be told, with the defaults it uses when it is not.
// Each default is chosen for a real cluster; tests shrink the timings.

import type { Logger } from "../util/log.ts";

export interface WatcherOptions {
  /** null/undefined: cluster-wide. */
  namespace?: string | null;
  labelSelector?: string;
  /** LIST page size (`limit`). Default 500. */
  pageSize?: number;
  /** WATCH `timeoutSeconds`, jittered ±10 % per request. Default 300. */
  serverTimeoutSeconds?: number;
  /**
   * No bytes at all (not even a BOOKMARK) for this long → drop the connection and re-watch
   * from the last resourceVersion. Servers ≥1.27 send a bookmark about every 60 s, so the
   * default of 90 s tolerates one late bookmark. Default 90 000.
   */
  inactivityTimeoutMs?: number;
  /** Reconnect backoff. Default 800 ms → 30 s, reset after 60 s without a failure. */
  backoff?: { initialMs: number; maxMs: number; resetAfterMs: number };
  /**
   * "auto" (default): try a streaming list (sendInitialEvents) once; if the server rejects it
   * (4xx, or an ERROR before any event) or ignores it (a plain BOOKMARK, a non-ADDED event,
   * or the stream ending or going silent before the initial-events-end bookmark), remember
   * that and use paged LISTs from then on. "always": streaming list or fail. "never": LIST.
   */
  streamingList?: "auto" | "always" | "never";
  logger?: Logger;
}

export const defaults = {
  pageSize: 500,
  serverTimeoutSeconds: 300,
  inactivityTimeoutMs: 90_000,
  backoff: { initialMs: 800, maxMs: 30_000, resetAfterMs: 60_000 },
  streamingList: "auto",
} as const;
