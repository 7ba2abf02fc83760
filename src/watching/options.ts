// WatcherOptions: what a watcher can be told, with the defaults it uses when it is not.
// Each default is chosen for a real cluster; tests shrink the timings.

import { DEFAULT_PAGE_SIZE } from "../kube/index.ts";
import { METADATA_LIST } from "../kube/index.ts";
import type { Shelf } from "../caching/index.ts";
import type { Logger } from "../util/index.ts";
import type { WatchClient, WatchObserver } from "./types.ts";
import { jitteredTimeout } from "./state.ts";

export interface WatcherOptions {
  /** null/undefined: cluster-wide. */
  namespace?: string | null;
  labelSelector?: string;
  /** Sent with the LIST and the WATCH, like labelSelector: the API server filters. */
  fieldSelector?: string;
  /**
   * KEP-5866's `shardSelector` for the LIST and WATCH of one events() call, asked afresh at
   * each call (a replica's shards change; the caller restarts the stream when they do).
   */
  shardSelector?: () => string | undefined;
  /**
   * Receive only metadata: LISTs ask for PartialObjectMetadataList, WATCHes for
   * PartialObjectMetadata (kube/partial.ts); the objects get the resource's apiVersion and kind.
   */
  metadataOnly?: boolean;
  /**
   * The watcher's part of its resource's store (caching/): what it knows is kept there, for the
   * synthetic deletions of a relist and for the store's readers. Default: a store of its own.
   */
  shelf?: Shelf;
  /**
   * With no `shelf`, what its own store keeps of each known object: its whole body ("bodies", the
   * default), or its identity ("identity": apiVersion, kind and metadata's name, namespace, uid,
   * resourceVersion, labels, finalizers, deletionTimestamp, ownerReferences) when no consumer reads
   * the body of a deleted object. Live events carry whole bodies either way.
   */
  keep?: "bodies" | "identity";
  /** LIST page size (`limit`). Default 500. */
  pageSize?: number;
  /** WATCH `timeoutSeconds`, jittered ±10 % per request. Default 300. */
  serverTimeoutSeconds?: number;
  /**
   * No bytes at all (not even a BOOKMARK) for this long → drop the connection and re-watch
   * from the last resourceVersion. Default: derived from the server timeout (see
   * `derivedInactivityTimeoutMs`), so a healthy server always ends a quiet stream first.
   */
  inactivityTimeoutMs?: number;
  /**
   * The longest line (one event's JSON) accepted from a watch stream, in bytes; a longer one
   * ends events() with a WatchError, and nothing of it is kept. Default 8 MiB.
   */
  maxLineBytes?: number;
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
  /** Hears of events and restarts (kobun_watch_* metrics); none by default. */
  observer?: WatchObserver;
}

/**
 * The watching.* settings' defaults, for a watcher made without them (the peering, lease and
 * namespace watches, ctx.api watches, tests); resource streams get the settings. Pinned to the
 * settings schema's by test/contracts/defaults.test.ts: this room may not import config/.
 */
export const defaults = {
  pageSize: DEFAULT_PAGE_SIZE,
  serverTimeoutSeconds: 300,
  backoff: { initialMs: 800, maxMs: 30_000, resetAfterMs: 60_000 },
  // An object is at most ~1.5 MiB in etcd; as JSON (base64 of binary data, escapes) it can be
  // a few times that. Several times that still bounds the memory of a broken stream.
  maxLineBytes: 8 * 1024 * 1024,
  streamingList: "auto",
} as const;

/** What a server may be late by in ending a watch at its timeoutSeconds (clocks, a busy server). */
const SERVER_TIMEOUT_MARGIN_S = 5;

/**
 * The inactivity timeout when none is given: the longest timeoutSeconds a request may ask
 * for (serverTimeout + 10 % jitter) plus a margin. A server ends a watch at its timeout even
 * when nothing happened, so a stream silent for longer than that is dead.
 */
export function derivedInactivityTimeoutMs(serverTimeoutSeconds: number): number {
  return (jitteredTimeout(serverTimeoutSeconds, 1) + SERVER_TIMEOUT_MARGIN_S) * 1000;
}

/** Which page of a LIST: the namespace, the shards, its size and where it starts. */
interface ListPage {
  namespace: string | null;
  shardSelector: string | undefined;
  limit: number;
  continue: string | undefined;
}

/** One LIST page's options: the watch's selectors, `limit` objects from the `continue` token. */
export function listQuery(options: WatcherOptions, page: ListPage): Parameters<WatchClient["list"]>[1] {
  const { labelSelector, fieldSelector, metadataOnly } = options;
  return { ...page, labelSelector, fieldSelector, ...(metadataOnly ? { accept: METADATA_LIST } : {}) };
}

/** A WATCH request's query: from `resourceVersion`, or a streaming list when it is undefined. */
export function watchQuery(
  resourceVersion: string | undefined, serverTimeoutSeconds: number,
  selectors: {
    labelSelector?: string | undefined; fieldSelector?: string | undefined; shardSelector?: string | undefined;
  },
): Record<string, string> {
  const { labelSelector, fieldSelector, shardSelector } = selectors;
  const q: Record<string, string> = { watch: "true", allowWatchBookmarks: "true" };
  if (resourceVersion === undefined) {
    q.sendInitialEvents = "true";
    q.resourceVersionMatch = "NotOlderThan";
  } else {
    q.resourceVersion = resourceVersion;
  }
  q.timeoutSeconds = String(jitteredTimeout(serverTimeoutSeconds));
  if (labelSelector) q.labelSelector = labelSelector;
  if (fieldSelector) q.fieldSelector = fieldSelector;
  if (shardSelector) q.shardSelector = shardSelector;
  return q;
}
