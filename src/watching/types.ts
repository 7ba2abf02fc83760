// The watcher's output vocabulary (after kube-rs's watcher): consumers can tell a (re)list
// from a change, and know when a relist is complete.

import type { KubeObject, ObjectList, Resource } from "../kube/index.ts";

export type WatchEvent =
  /** A (re)list begins: objects until `relist-done` describe the current state. */
  | { type: "relist-start" }
  /** An object as found by the (re)list. */
  | { type: "listed"; object: KubeObject }
  /** The (re)list is complete; watching continues from `resourceVersion`. */
  | { type: "relist-done"; resourceVersion: string }
  | { type: "added"; object: KubeObject }
  | { type: "modified"; object: KubeObject }
  /** `synthetic`: the object was known before a relist and is missing from it (deleted while the stream was broken). */
  | { type: "deleted"; object: KubeObject; synthetic?: boolean };

/** Why a watch stream was opened again (the reasons of `kobun_watch_restarts_total`). */
export type WatchRestartReason = "410" | "timeout" | "stall" | "error";

/**
 * Hears what a watcher sees, without knowing who listens (runtime/ wires the metrics in).
 * Called on the watcher's path for every event: keep it to a counter increment.
 */
export interface WatchObserver {
  /** A watch event arrived, by its wire type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR, or an unknown one). */
  event(type: string): void;
  /**
   * The stream ends and will be opened again: 410 Gone, the server's timeout, silence past the inactivity
   * timeout, a failure.
   */
  restarted(reason: WatchRestartReason): void;
}

/** The two moments of opening a stream that only the client knows (KubeClient: its stream budget). */
export interface StreamHooks {
  /** The stream waits for a free connection slot before its request can be sent. */
  waitingForSlot?(): void;
  /** The request is being sent now. */
  sending?(): void;
}

/**
 * What the watcher needs from the API client (KubeClient satisfies it). Kept this narrow so
 * that the watcher depends on two calls, not on a whole client.
 */
export interface WatchClient {
  /** One page of a LIST. */
  list(
    resource: Resource,
    options: {
      namespace?: string | null;
      labelSelector?: string;
      fieldSelector?: string;
      /** KEP-5866 (sharding/): honoured by servers with ShardedListAndWatch, ignored by others. */
      shardSelector?: string;
      limit?: number;
      continue?: string;
      resourceVersion?: string;
      /** The Accept header (a metadata-only LIST: kube/partial.ts). */
      accept?: string;
      signal?: AbortSignal;
    },
  ): Promise<ObjectList>;
  /**
   * A streaming GET: resolves on headers; non-2xx → ApiError; aborting `signal` closes the socket.
   * `hooks` hear when the stream waits for a connection slot and when the request goes out.
   */
  stream(
    path: string, query: Record<string, string>, signal: AbortSignal, hooks?: StreamHooks, accept?: string,
  ): Promise<Response>;
}
