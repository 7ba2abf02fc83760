// The API client handlers get as `ctx.api`: the operator's own KubeClient, a field manager
// stable across replicas and restarts (one per peering: the replicas of one operator share
// it), and watches made by watching/'s Watcher, which handling/ cannot import itself.

import type { Settings } from "../config/index.ts";
import type { KubeClient } from "../kube/index.ts";
import type { Resource } from "../kube/index.ts";
import type { ApiWatchEvent } from "../declaring/index.ts";
import { ApiClient, type WriteListener } from "../handling/index.ts";
import type { Logger } from "../util/index.ts";
import { Watcher } from "../watching/index.ts";

/**
 * LIST then WATCH of one resource, with the operator's own watcher (reconnects, 410 relists);
 * ends when `signal` aborts.
 */
export function watchResource(
  client: KubeClient, resource: Resource,
  o: { namespace: string | null; labelSelector?: string; fieldSelector?: string }, signal: AbortSignal, logger: Logger,
): AsyncIterable<ApiWatchEvent> {
  const { namespace, labelSelector, fieldSelector } = o;
  const watcher = new Watcher(client, resource, { namespace, labelSelector, fieldSelector, logger });
  return watcher.events(signal) as AsyncIterable<ApiWatchEvent>;
}

export function handlerApi(client: KubeClient, settings: Settings, logger: Logger, written?: WriteListener): ApiClient {
  const peering = settings.peering.name;
  return new ApiClient({
    client, ...(written ? { written } : {}),
    fieldManager: peering === "default" ? "kobun" : `kobun-${peering}`,
    watch: (resource, o, signal) => watchResource(client, resource, o, signal, logger.child({ watch: "ctx.api" })),
  });
}
