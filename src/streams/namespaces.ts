// Namespace discovery for globs (`team-*`, `!kube-*`): watch the Namespace objects and keep
// one child scope per matching namespace, started when it appears and closed when it goes.

import type { KubeClient } from "../kube/index.ts";
import type { Resource } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import type { TaskScope } from "../util/index.ts";
import { defaults } from "../watching/index.ts";
import { Watcher } from "../watching/index.ts";
import type { Health } from "../observability/index.ts";
import { supervise } from "../util/index.ts";
import { Backoff } from "../util/index.ts";
import { ForbiddenRule } from "./forbidden.ts";

export const namespacesResource: Resource = {
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  namespaced: false,
  statusSubresource: true,
};

export interface NamespaceFollowerOptions {
  client: KubeClient;
  matches(namespace: string): boolean;
  /** Starts everything kobun does in one namespace, inside the given scope. */
  start(namespace: string, scope: TaskScope): void;
  logger: Logger;
  health: Health;
  graceMs: number;
  /** The longest watch line accepted, in bytes (watching.lineLimit). */
  maxLineBytes: number;
}

/** Runs until `scope` closes; namespaces' scopes are children of it. */
export async function followNamespaces(options: NamespaceFollowerOptions, scope: TaskScope): Promise<void> {
  const { client, matches, start, logger, health, graceMs } = options;
  const active = new Map<string, TaskScope>();
  const watcher = new Watcher(client, namespacesResource, { logger, maxLineBytes: options.maxLineBytes });
  const stop = (namespace: string) => {
    const child = active.get(namespace);
    if (!child) return;
    active.delete(namespace);
    logger.info("namespace gone; no longer serving it", { namespace });
    void child.close(graceMs);
  };
  const component = health.component("watch namespaces", scope.signal);
  // Not ready before the namespaces are listed: the streams of those that match open their own gates as
  // they start (during the LIST's events), so this one is released a turn after the LIST is done (a gate
  // is released once; later relists change nothing).
  const readiness = health.readiness.gate("watch namespaces", scope.signal);
  // Started with the operator: without permission to follow namespaces, it cannot work at all.
  const { backoff } = defaults;
  const forbidden = new ForbiddenRule({ fatalAtOnce: true, healthyAfterMs: backoff.resetAfterMs });
  // Like every resource stream: a failing watch is reported and restarted, never left dead
  // (new namespaces would silently go unserved).
  await supervise(
    {
      open: (s) => watcher.events(s),
      each: (event) => {
        forbidden.saw(event);
        if (event.type === "relist-done") {
          component.clear();
          setTimeout(() => readiness.ready(), 0);
        }
        if (event.type === "relist-start" || event.type === "relist-done") return;
        const name = event.object.metadata.name;
        if (!name || !matches(name)) return;
        // A terminating namespace is still served: its objects may carry our finalizer,
        // and the namespace cannot go away until our delete handlers have released them.
        if (event.type === "deleted") stop(name);
        else if (!active.has(name)) {
          const child = scope.child(name);
          active.set(name, child);
          logger.info("namespace found; serving it", { namespace: name });
          start(name, child);
        }
      },
      delays: new Backoff({ initial: backoff.initialMs, max: backoff.maxMs, resetAfter: backoff.resetAfterMs }),
      failed: (error, { delayMs }) => {
        forbidden.failed(error); // throws when a 403 ends the operator (exit 5)
        const message = error instanceof Error ? error.message : String(error);
        component.fail(message);
        logger.error("watching namespaces failed; restarting", { error: message, retryInMs: delayMs });
      },
    },
    scope.signal,
  );
}
