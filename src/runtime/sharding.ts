// Sharding, wired: the shard Leases run as a task of the operator; while this replica owns no
// shard the operator's toggle holds it frozen (nothing to watch); each resource is asked once
// whether its server applies `shardSelector` (then streams watch only the owned ranges), and
// every event is filtered by the same hash either way, so the behaviour is identical with and
// without the server's help. A change of the owned shards touches only the shards that changed
// (streams/shard-streams.ts); a shard given up waits for its cycles (holds). The children of the
// reconciles (what they own or watch) are watched whole by every replica: their events wake parents
// of any shard, and only the parents of shards owned here run (runtime/reconcile-wiring.ts).

import type { Settings } from "../config/index.ts";
import type { Indexes } from "../handling/index.ts";
import type { KubeClient } from "../kube/index.ts";
import { resourceName, type KubeObject, type Resource } from "../kube/index.ts";
import { peerId } from "../peering/index.ts";
import { Sharding } from "../sharding/index.ts";
import type { MetricsRegistry } from "../observability/index.ts";
import type { Logger } from "../util/index.ts";
import type { TaskScope } from "../util/index.ts";
import type { Toggle } from "../util/index.ts";
import { shardMetrics } from "./metrics.ts";
import { serveShardStreams, type ShardedLayout } from "../streams/index.ts";

const HOLDER = "sharding";
/** The freeze of a replica waiting for replicas with another shard count to go: it does not make /readyz fail. */
const ROLLOUT_HOLDER = "sharding-rollout";

export interface ShardedStreams extends ShardedLayout {
  sharding: Sharding;
  /** The freezes /readyz counts as ready: waiting for replicas with another shard count to go. */
  standbyHolders: ReadonlySet<string>;
  /** The resources watched whole, every shard's objects (the reconciles' children): their cycles hold no shard. */
  whole: ReadonlySet<Resource>;
  /**
   * Makes the reconcilers forget the objects of a shard given up (once its work ended) or taken,
   * so that taking it starts them as at start-up.
   */
  forgetIn(reconcilers: Iterable<{ forget(which: (object: Pick<KubeObject, "metadata">) => boolean): void }>): void;
}

/** What sharding is wired with; made by operate() (parts.ts). */
export interface ShardingWiring {
  client: KubeClient;
  settings: Settings;
  logger: Logger;
  scope: TaskScope;
  /** The operator's toggle: frozen while this replica owns no shard. */
  toggle: Toggle;
  resources: Resource[];
  /** The one namespace served, if one is fixed: the Leases' namespace outside a pod. */
  namespace: string | null;
  metrics: MetricsRegistry;
  indexes?: Indexes;
  /** The resources to watch whole (wholeUnderSharding), with what holds the handlers until their LISTs are in. */
  whole?: { resources: ReadonlySet<Resource>; holds: Pick<Indexes, "stream"> };
  /** This replica's id; peerId() when omitted. */
  id?: string;
  /** Resolves once the handlers have finished at shutdown: the shards are handed over only then. */
  handlersDone?: Promise<void>;
}

/** Starts the shard Leases in `options.scope`; the streams are laid over the owned shards. */
export async function startSharding(options: ShardingWiring, signal: AbortSignal): Promise<ShardedStreams> {
  const { client, settings, logger, scope, toggle } = options;
  const { lease } = settings.peering;
  const log = logger.child({ component: "sharding" });
  const freezes = shardFreezes(toggle, settings.sharding.shards);
  const sharding = new Sharding({
    client, logger: log,
    namespace: process.env.POD_NAMESPACE ?? options.namespace ?? "default",
    group: `kobun-${settings.peering.name}`,
    shards: settings.sharding.shards,
    key: settings.sharding.key,
    id: options.id ?? peerId(),
    durationMs: lease.duration * 1000,
    renewDeadlineMs: lease.renewDeadline * 1000,
    retryPeriodMs: lease.retryPeriod * 1000,
    graceMs: settings.peering.freezeGracePeriod * 1000,
    observer: shardMetrics(options.metrics),
    onWaiting: (waiting) => freezes.waiting(waiting, sharding.owned),
    beforeLeave: () => stopped(options.handlersDone, settings.shutdown.gracePeriod * 1000),
  });
  const serverSide = await serverSideSelectors(sharding, { ...options, logger: log }, signal);
  freezes.owned([]);
  sharding.onChange(freezes.owned);
  if (options.indexes) followInIndexes(sharding, options.indexes);
  scope.spawn("sharding", (s) => sharding.run(s));
  const whole = options.whole;
  /** A whole resource's stream holds every handler until it has listed, at start and at each take. */
  const wholeHold = (resource: Resource, name: string) => {
    if (!whole?.resources.has(resource)) return {};
    return { whole: true, takeHold: () => whole.holds.stream(resource, `${name} (whole)`, true) };
  };
  return {
    sharding,
    standbyHolders: new Set([ROLLOUT_HOLDER]),
    whole: whole?.resources ?? new Set(),
    // Lays the streams of a resource in one namespace over the owned shards (streams/shard-streams.ts).
    serve: ({ resource, ...stream }) => serveShardStreams({
      ...stream, sharding, key: settings.sharding.key, shards: settings.sharding.shards,
      serverSide: serverSide.has(resource), ...wholeHold(resource, stream.name),
    }),
    forgetIn: (reconcilers) =>
      void sharding.onForget((shards) => {
        const which = new Set(shards);
        for (const reconciler of reconcilers) reconciler.forget((object) => which.has(sharding.shardOf(object)));
      }),
  };
}

/** The resources whose API server applies `shardSelector` (asked once each; a failure: filtering here). */
async function serverSideSelectors(
  sharding: Sharding, { client, resources, namespace, logger, whole }: ShardingWiring, signal: AbortSignal,
): Promise<Set<Resource>> {
  const serverSide = new Set<Resource>();
  for (const resource of resources) {
    if (whole?.resources.has(resource)) continue; // watched whole: no selector to ask about
    try {
      const applies = await sharding.detect(client, resource, resource.namespaced ? namespace : null, signal);
      if (applies) serverSide.add(resource);
    } catch (error) {
      const failure = { resource: resourceName(resource), error: (error as Error).message };
      logger.debug("could not ask whether the server applies shardSelector; filtering here", failure);
    }
    logger.info(serverSide.has(resource)
      ? "the API server applies shardSelector: watching only the owned ranges"
      : "the API server ignores shardSelector: filtering by the same hash here", { resource: resourceName(resource) });
  }
  return serverSide;
}

/**
 * Owning no shard freezes this replica; waiting for replicas with another shard count to go
 * (a rolling update) is a freeze of its own, which /readyz counts as ready (standbyHolders):
 * else a RollingUpdate with maxUnavailable 0 would wait for it for ever.
 */
function shardFreezes(toggle: Toggle, shards: number) {
  let waitingFor: { shards: number; holders: string[] } | undefined;
  const owned = (held: readonly number[]): void => {
    if (held.length === 0 && waitingFor) {
      const holders = waitingFor.holders.join(", ");
      toggle.freeze(ROLLOUT_HOLDER, `sharding: replicas with ${waitingFor.shards} shards (${holders}) ` +
        `hold the hash space; this one (${shards}) takes over once they are gone`);
      toggle.unfreeze(HOLDER);
    } else {
      if (held.length === 0) toggle.freeze(HOLDER, "sharding: this replica owns no shard");
      else toggle.unfreeze(HOLDER);
      toggle.unfreeze(ROLLOUT_HOLDER);
    }
  };
  return {
    owned,
    waiting(waiting: { shards: number; holders: string[] } | undefined, held: readonly number[]): void {
      waitingFor = waiting;
      owned(held);
    },
  };
}

/**
 * Keeps the indexes to the owned shards (a shard taken holds the handlers until it is listed:
 * streams/layout.ts, streams/shard-streams.ts).
 */
function followInIndexes(sharding: Sharding, indexes: Indexes): void {
  // A shard given up is no longer heard (its deletions neither): its objects leave the indexes.
  sharding.onChange(() => indexes.forget((object) => !sharding.owns(object)));
}

/**
 * Resolves when the handlers have finished at a stop, or after the shutdown's grace at the latest (a run()
 * that failed while starting never closes its handlers: its Leases must not be renewed for ever).
 */
function stopped(handlersDone: Promise<void> | undefined, graceMs: number): Promise<void> {
  if (!handlersDone) return Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
  return Promise.race([handlersDone, bound]).finally(() => clearTimeout(timer));
}
