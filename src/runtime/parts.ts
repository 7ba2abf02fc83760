// The operator's parts: what operate() (operator.ts) starts once the handlers' resources are
// known — the Event poster, the indexes, the sharding, a store and a reconciler per resource —
// and how they are served: the probes, the webhooks, the Events and the streams. operator.ts
// keeps their life: when they start, what ends them, and the shutdown.

import type { Store } from "../caching/index.ts";
import { fixedNamespaces, type Settings } from "../config/index.ts";
import type { Registry } from "../declaring/index.ts";
import type { ApiClient, Indexes } from "../handling/index.ts";
import { resourceName, type KubeClient, type Resource } from "../kube/index.ts";
import type { Health } from "../observability/index.ts";
import { EventPoster } from "../posting/index.ts";
import { named, type Reconciler } from "../reconciling/index.ts";
import type { Logger, TaskScope, Toggle } from "../util/index.ts";
import { frozenMetric } from "./metrics.ts";
import { reconcilersFor } from "./reconcilers.ts";
import { enabledWebhooks } from "./resources.ts";
import type { ServedResources } from "./served-resources.ts";
import { serveProbes } from "./serving.ts";
import type { ShardedStreams } from "./sharding.ts";
import { knownObjectStores, serveLayout } from "./stream-wiring.ts";
import { namespacesServed, readByReconciles, wholeUnderSharding, type CachedResources } from "./reconcile-wiring.ts";

/** What run() made for the parts; run() closes the client and the tracing after them. */
export interface Operating {
  settings: Settings;
  logger: Logger;
  registry: Registry;
  signal: AbortSignal;
  graceMs: number;
  client: KubeClient;
  health: Health;
  /** Shared by every handler and activity (login included). */
  memo: Record<string, any>;
  /** The user named the peering object (`--peering`: `mandatory`); this operator's peer id, if given. */
  peering: { mandatory: boolean; id?: string };
}

/** What operate() has made by the time the parts start. */
export interface Beginning {
  /** What handlers get as ctx.api. */
  api: ApiClient;
  /** What on.reconcile's ctx.cache reads: filled here, as the stores are made. */
  cached: CachedResources;
  /** The handled resources as the API server serves them (resolveResources). */
  resolved: ServedResources;
  toggle: Toggle;
  scope: TaskScope;
  /** Made before the startup handlers, which get them (activities/). */
  indexes: Indexes;
  /** Made before the startup handlers (they post through it too); started here. */
  poster: EventPoster;
}

/** The operator's parts: made by startParts(), served by serve(), closed by shutDown(). */
export interface Parts extends Beginning {
  /** The gates of namespaces with a peering of their own; others follow the operator's toggle. */
  gates: Map<string, Toggle>;
  sharded: ShardedStreams | undefined;
  /** One store of known objects per resource (caching/). */
  stores: Map<Resource, Store>;
  reconcilers: Map<Resource, Reconciler>;
  /** Resolved by shutDown() once the handlers have finished (or were abandoned). */
  handlers: PromiseWithResolvers<void>;
}

/** The indexes, the sharding (when on), a store and a reconciler per resource; none serves yet. */
export async function startParts(o: Operating, begun: Beginning): Promise<Parts> {
  const { client, settings, logger, registry, health } = o;
  const { api, toggle, scope, indexes, poster, resolved: { resources, configs, metadataOnly } } = begun;
  const gates = new Map<string, Toggle>();
  for (const [resource, why] of metadataOnly) {
    indexes.metadataOnly.set(resource, `${resourceName(resource)} is watched metadata-only (${why})`);
  }
  // Peering and the shards are left only once the handlers have finished: no other replica starts on objects
  // still handled here.
  const handlers = Promise.withResolvers<void>();
  const sharded = settings.sharding.enabled
    ? await (await import("./sharding.ts")).startSharding({
      client, settings, logger, scope, toggle, resources, namespace: fixedNamespaces(settings)?.[0] ?? null,
      metrics: health.metrics, handlersDone: handlers.promise,
      ...(registry.indexes.length ? { indexes } : {}),
      whole: { resources: wholeUnderSharding(registry, resources), holds: indexes },
      ...(o.peering.id ? { id: o.peering.id } : {}),
    }, o.signal)
    : undefined;
  const read = readByReconciles(registry);
  const stores = knownObjectStores(registry, resources, read); // one per resource: its streams write it (caching/)
  const owned = registry.reconciles.owned();
  for (const [resource, store] of stores) {
    if (named(read, resource)) {
      begun.cached.add(resource, store, named(owned, resource), namespacesServed(settings, configs.get(resource)));
    }
  }
  begun.cached.quietEchoes(settings.reconcile.quietEchoes);
  const reconcilers = reconcilersFor(resources, {
    client, registry, settings, logger, poster, api, health, toggle, gates, sharded, indexes, memo: o.memo,
    configs, metadataOnly, cached: begun.cached,
  });
  return { ...begun, gates, sharded, stores, reconcilers, handlers };
}

/**
 * Serves the parts: the probes, the webhooks (when there are any), the Events, and the streams.
 * Returns where the probes are served, and what lets peering leave once the handlers have finished.
 */
export async function serve(o: Operating, parts: Parts): Promise<{ probeUrl?: string; handlersFinished: () => void }> {
  const { client, settings, logger, registry, signal, graceMs, health } = o;
  const { toggle, scope, sharded, indexes, poster, gates, stores } = parts;
  const { resources, configs, metadataOnly } = parts.resolved;
  const probeUrl = await serveProbes(settings, health, scope, logger);
  const frozen = frozenMetric(health.metrics);
  frozen("operator", toggle, signal);
  const frozenIsReady = settings.probes.readiness === "frozen-is-ready";
  health.readiness.frozenBy(() => frozenReasons(toggle, gates), frozenIsReady, sharded?.standbyHolders);

  // Imported only when there are webhooks: the server, certificates and X.509 code cost an
  // operator without them ~0.6 MB of RSS (sharding, in startParts(), likewise ~0.8 MB).
  // A resource with enabled: false has no webhooks either (conversions stay: the CRD needs them).
  const webhooks = enabledWebhooks(settings, registry.webhooks, registry.aliases.all());
  const admissions = { webhooks, conversions: registry.conversions };
  if (admissions.webhooks.length || admissions.conversions.length) {
    const { serveWebhooks } = await import("./webhooks.ts");
    await serveWebhooks({ client, registry: admissions, settings, logger, scope, signal })
      .catch(async (error) => { await scope.close(0); throw error; });
  }
  poster.start(scope);
  const { promise: handlersDone, resolve: handlersFinished } = parts.handlers;
  serveLayout({
    client, settings, logger, health, toggle, scope, graceMs, sharded, indexes, registry,
    resources: { reconcilers: parts.reconcilers, stores, configs, metadataOnly, echoes: parts.cached },
    gates: { byNamespace: gates, frozen },
    peering: { ...o.peering, handlersDone },
  });
  return { ...(probeUrl ? { probeUrl } : {}), handlersFinished };
}

/**
 * Why the operator is frozen, for /readyz: its own toggle's reasons, and those of every namespace
 * frozen by a peering object of its own (`kobun freeze -n NS`), keyed `NS/holder`.
 */
function frozenReasons(toggle: Toggle, gates: ReadonlyMap<string, Toggle>): Record<string, string> {
  const own = toggle.reasons();
  const reasons = { ...own };
  for (const [namespace, gate] of gates) {
    // A gate also reports its parent's (the operator's) holders: those are counted once, as they are.
    for (const [holder, why] of Object.entries(gate.reasons())) {
      if (!(holder in own)) reasons[`${namespace}/${holder}`] = why;
    }
  }
  return reasons;
}
