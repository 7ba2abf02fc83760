// The streams room wired into the operator: the settings read into each layout's named options
// (its namespaces, its peerings, its watching section), the peerings started where a layout
// says, the namespaces' gates registered with the reconcilers and the kobun_frozen metric, and
// the streams' metrics and heap activity. What streams run, and how they are kept running, is
// streams/'s.

import {
  fixedNamespaces, namespaceMatcher, resourceNamespaces, type ResourceSettings, type Settings,
} from "../config/index.ts";
import type { Registry } from "../declaring/index.ts";
import type { Indexes } from "../handling/index.ts";
import { Store, type OwnEchoes } from "../caching/index.ts";
import { streamBudget } from "../kube/index.ts";
import type { KubeClient } from "../kube/index.ts";
import { resourceName, type Resource, type ResourceSelector } from "../kube/index.ts";
import type { Health } from "../observability/index.ts";
import { peeringResource } from "../peering/index.ts";
import type { Reconciler } from "../reconciling/index.ts";
import { named, readsDeletedBodies, withWakes } from "../reconciling/index.ts";
import {
  layOut, reportStarvedStreams, type LayoutNamespaces, type LayoutPeering, type StreamTimings, type WatchedResource,
} from "../streams/index.ts";
import { aborted } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import type { TaskScope } from "../util/index.ts";
import { Toggle } from "../util/index.ts";
import { heapActivity } from "./heap-pacing.ts";
import { budgetMetrics, peeringMetrics, watchMetrics } from "./metrics.ts";
import { startPeering } from "./peering.ts";
import type { ShardedStreams } from "./sharding.ts";

/** What the streams are wired with; made by operate(). */
export interface StreamWiring {
  client: KubeClient;
  settings: Settings;
  logger: Logger;
  /** Whose on.reconcile an event wakes (reconciling/'s withWakes). */
  registry: Registry;
  health: Health;
  /** The operator's freeze toggle. */
  toggle: Toggle;
  scope: TaskScope;
  graceMs: number;
  /**
   * The handled resources: each one's reconciler, its store (knownObjectStores), its kobun.yaml entry
   * (if any), and why it is watched metadata-only (if it is).
   */
  resources: {
    reconcilers: Map<Resource, Reconciler>;
    stores: Map<Resource, Store>;
    configs: Map<Resource, ResourceSettings>;
    metadataOnly: Map<Resource, string>;
    /** The owned resources' echoes (runtime's CachedResources): a blind write's echo wakes no owner. */
    echoes?: { echoesOf(resource: Resource): OwnEchoes | undefined };
  };
  /**
   * The gates of namespaces with a peering of their own, filled here; `frozen` registers each for
   * the kobun_frozen metric.
   */
  gates: { byNamespace: Map<string, Toggle>; frozen(scope: string, toggle: Toggle, life: AbortSignal): void };
  /** The user named the peering object (`mandatory`); this operator's id; peering leaves once the handlers are done. */
  peering: { mandatory: boolean; id?: string; handlersDone: Promise<void> };
  /** Sharding on: the owned shards filter the events and shape the watches. */
  sharded?: ShardedStreams | undefined;
  /** The indexes: handlers wait for the first LIST of every stream they are kept from. */
  indexes?: Indexes;
}

/**
 * Starts the streams and peerings of the settings' layout, in `wiring.scope`, and the report of
 * streams starved of connections (streams/starvation.ts, and the budget's gauges). A resource whose
 * kobun.yaml entry gives its own `namespaces` is laid out apart, in a child scope, by the same
 * rules, under the operator's one peering (resources.ts's checkResourceKeys: there is only one then).
 */
export function serveLayout(wiring: StreamWiring): void {
  const { reconcilers, configs } = wiring.resources;
  const { health, logger } = wiring;
  budgetMetrics(health.metrics, streamBudget);
  wiring.scope.spawn("watch budget", (s) => reportStarvedStreams({ budget: streamBudget, health, logger }, s));
  const apart = new Map<Resource, Reconciler>();
  const together = new Map<Resource, Reconciler>();
  for (const [resource, reconciler] of reconcilers) {
    (configs.get(resource)?.namespaces ? apart : together).set(resource, reconciler);
  }
  layOutSettings(wiring, { settings: wiring.settings, scope: wiring.scope, reconcilers: together, peers: true });
  for (const [resource, reconciler] of apart) {
    const namespaces = resourceNamespaces(configs.get(resource)!.namespaces)!;
    const scope = wiring.scope.child(`resource ${resourceName(resource)}`);
    const settings = { ...wiring.settings, namespaces };
    layOutSettings(wiring, { settings, scope, reconcilers: new Map([[resource, reconciler]]), peers: false });
  }
}

/**
 * One layout: `reconcilers`' resources over `settings.namespaces`, in `scope`; `peers`: it runs
 * the operator's peering.
 */
interface OneLayout {
  settings: Settings;
  scope: TaskScope;
  reconcilers: Map<Resource, Reconciler>;
  peers: boolean;
}

function layOutSettings(wiring: StreamWiring, layout: OneLayout): void {
  const { client, logger, health, toggle, graceMs, sharded, indexes } = wiring;
  const { settings, scope } = layout;
  layOut({
    client, logger, health, toggle, scope, graceMs, sharded,
    ...(indexes ? { indexes } : {}),
    timings: streamTimings(settings.watching),
    namespaces: namespacesOf(settings),
    peering: peeringOf(wiring, layout),
    resources: watchedResources(wiring, layout.reconcilers),
    observers: { metrics: (resource) => watchMetrics(health.metrics, resourceName(resource)), activity: heapActivity },
  });
}

/**
 * One store of known objects per watched resource (caching/), shared by all of its streams and
 * by whatever reads its objects. It keeps bodies only for a reader that needs them: the
 * reconciler's on.event handlers (a deletion's body); else identities.
 */
export function knownObjectStores(
  registry: Registry, resources: readonly Resource[], read: readonly ResourceSelector[] = [],
): Map<Resource, Store> {
  const bodies = (resource: Resource) => readsDeletedBodies(registry, resource) || named(read, resource);
  const keeps = (resource: Resource) => (bodies(resource) ? "bodies" : "identity");
  return new Map(resources.map((resource) => [resource, new Store(resource, { keeps: keeps(resource) })]));
}

/** Each resource's reconciler, its store, and what its streams select. */
function watchedResources(
  wiring: StreamWiring, reconcilers: Map<Resource, Reconciler>,
): Map<Resource, WatchedResource> {
  const { configs, metadataOnly, stores } = wiring.resources;
  const watched = new Map<Resource, WatchedResource>();
  for (const [resource, reconciler] of reconcilers) {
    const store = stores.get(resource);
    if (!store) throw new Error(`no store of known objects for ${resourceName(resource)} (knownObjectStores)`);
    const selection = { selectors: configs.get(resource), metadataOnly: metadataOnly.has(resource) };
    const { reconcilers: all, echoes } = wiring.resources;
    const { registry, logger } = wiring;
    const consumer = withWakes(resource, reconciler, all, registry, logger, echoes?.echoesOf(resource), store);
    watched.set(resource, { consumer, store, selection });
  }
  return watched;
}

/** The streams' timings from the settings' watching section (seconds there, ms here). */
export function streamTimings(w: Settings["watching"]): StreamTimings {
  return {
    watcher: {
      pageSize: w.pageSize,
      maxLineBytes: w.lineLimit,
      serverTimeoutSeconds: w.serverTimeout,
      ...(w.clientTimeout > 0 ? { inactivityTimeoutMs: w.clientTimeout * 1000 } : {}),
    },
    backoff: { initialMs: w.backoff.initial * 1000, maxMs: w.backoff.max * 1000, factor: w.backoff.factor },
    healthyAfterMs: w.reconnectHealthyAfter * 1000,
  };
}

/** The namespaces a layout serves, read from its settings. */
function namespacesOf(settings: Settings): LayoutNamespaces {
  const { include, exclude, allNamespaces, defaulted } = settings.namespaces;
  const fixed = include.length ? fixedNamespaces(settings) : null;
  return {
    matches: namespaceMatcher([...include], [...exclude]),
    clusterWide: allNamespaces || fixed === null && include.length === 0,
    defaulted,
    fixed,
    clusterWideAbove: settings.watching.clusterWideAbove,
  };
}

/**
 * One peering object for the cluster (or one Lease); otherwise one per served namespace. A
 * layout apart has none of its own: the operator's one peering gates it.
 */
function peeringOf(wiring: StreamWiring, { settings, peers }: OneLayout): LayoutPeering {
  const { client, logger, health } = wiring;
  const perNamespace = peers && !settings.peering.clusterwide && settings.peering.mode !== "lease";
  /** One per layout: what every peering of it would warn about is said once. */
  const notices = new Set<string>();
  return {
    perNamespace,
    ...(perNamespace && !settings.peering.standalone
      ? { objects: { resource: peeringResource(settings.peering.group, true), name: settings.peering.name } }
      : {}),
    ...(peers ? {
      start: ({ namespace, within, gate, events }) => startPeering({
        client, toggle: gate, settings, logger, namespace, scope: within, notices,
        handlersDone: () => wiring.peering.handlersDone,
        mandatory: wiring.peering.mandatory,
        ...(wiring.peering.id ? { id: wiring.peering.id } : {}),
        ...(events ? { events } : {}),
        observer: {
          ...peeringMetrics(health.metrics, namespace ?? "operator"),
          peeringFailing: peeringProblem(health, namespace, within.signal),
        },
      }),
    } satisfies Pick<LayoutPeering, "start"> : {}),
    gate: (namespace, within) => namespaceGate(wiring, within, namespace),
  };
}

/** A namespace's own gate: its peering freezes only its streams (and it follows the operator's). */
function namespaceGate(wiring: StreamWiring, within: TaskScope, namespace: string): Toggle {
  const { byNamespace, frozen } = wiring.gates;
  const gate = new Toggle(wiring.toggle);
  byNamespace.set(namespace, gate);
  frozen(namespace, gate, within.signal);
  within.spawn("gate", async (s) => {
    await aborted(s);
    if (byNamespace.get(namespace) === gate) byNamespace.delete(namespace);
    gate.dispose();
  });
  return gate;
}

/** A peering that cannot follow its object, as a /healthz problem of its own, for as long as `life` lasts. */
function peeringProblem(health: Health, namespace: string | null, life: AbortSignal): (why: string | null) => void {
  const component = health.component(`peering ${namespace === null ? "of the operator" : `in ${namespace}`}`, life);
  return (why) => (why === null ? component.clear() : component.fail(why));
}
