// One Reconciler per handled resource, each wired with its own kobun.yaml entry's settings, its
// metrics, how its objects are taken away (the freeze gates, the owned shards) and where its
// progress is stored. Apart from operator.ts: this is what every resource gets, that is its order.

import type { ResourceSettings, Settings } from "../config/index.ts";
import type { ApiClient, Indexes } from "../handling/index.ts";
import type { Registry } from "../declaring/index.ts";
import { resourceName, type KubeClient, type KubeObject, type Resource } from "../kube/index.ts";
import type { Health } from "../observability/index.ts";
import type { EventPoster } from "../posting/index.ts";
import { Reconciler } from "../reconciling/index.ts";
import type { Logger, Toggle } from "../util/index.ts";
import { reconcileMetrics, workqueueMetrics } from "./metrics.ts";
import { settingsFor } from "./resources.ts";
import { reconcileWiringOf, type CachedResources } from "./reconcile-wiring.ts";
import type { ShardedStreams } from "./sharding.ts";

/** What the reconcilers are wired with; made by operate(). */
export interface ReconcilerWiring {
  client: KubeClient;
  registry: Registry;
  settings: Settings;
  logger: Logger;
  poster: EventPoster;
  /** What handlers get as ctx.api. */
  api: ApiClient;
  health: Health;
  toggle: Toggle;
  gates: Map<string, Toggle>;
  sharded: ShardedStreams | undefined;
  indexes: Indexes;
  memo: Record<string, any>;
  /** kobun.yaml entries: their workers and handling override the global ones per resource. */
  configs: Map<Resource, ResourceSettings>;
  /** The resources watched metadata-only, and why: their progress lives in annotations. */
  metadataOnly: Map<Resource, string>;
  /** What on.reconcile reads (reconcile-wiring.ts). */
  cached: CachedResources;
}

/**
 * One reconciler per resource; their handlers stop when their namespace's gate (or the operator's
 * toggle) freezes.
 */
export function reconcilersFor(resources: Resource[], w: ReconcilerWiring): Map<Resource, Reconciler> {
  /** Aborts when objects of this namespace are taken away: running handlers there stop (ownership is exclusive). */
  const freezeSignal = (namespace: string | undefined) =>
    ((namespace !== undefined && w.gates.get(namespace)) || w.toggle).runningSignal;
  const reconcilers = new Map<Resource, Reconciler>();
  for (const resource of resources) {
    const name = resourceName(resource);
    const logger = w.logger.child({ resource: name });
    const config = w.configs.get(resource);
    const settings = settingsFor(w.settings, config);
    const observers = {
      cycles: reconcileMetrics(w.health.metrics, name, settings.workers.limit),
      queue: workqueueMetrics(w.health.metrics, name),
    };
    // Sharded: each cycle holds its object's shard, so a handover waits for it. A resource watched whole (a
    // reconcile's children) has no worker of its own: its events only wake parents, whose cycles hold theirs.
    const sharding = w.sharded?.whole.has(resource) ? undefined : w.sharded?.sharding;
    const ownership = sharding
      ? { freezeSignal, hold: (object: KubeObject) => sharding.hold(object) }
      : { freezeSignal };
    const { client, registry, poster, api, indexes, memo } = w;
    const storage = storageOf(config, w.metadataOnly.get(resource));
    const reconciled = registry.reconciles.forResource(resource);
    const reconcile = reconciled ? { reconcile: reconcileWiringOf(resource, w.cached, settings) } : {};
    reconcilers.set(resource, new Reconciler({
      client, resource, registry, settings, logger, poster, api, indexes, memo, ownership, observers, ...storage,
      ...reconcile,
    }));
  }
  w.sharded?.forgetIn([...reconcilers.values()]); // a shard given up or taken: its objects start afresh
  return reconcilers;
}

/**
 * Where a resource's progress is stored: a metadata-only watch (`partial`, why) never receives
 * status, so progress must live where it is received; otherwise its kobun.yaml entry may choose.
 */
function storageOf(config: ResourceSettings | undefined, partial: string | undefined) {
  if (partial) return { storage: "annotations" as const, metadataOnly: partial };
  return config && config.storage !== "auto" ? { storage: config.storage } : {};
}
