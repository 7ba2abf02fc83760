// How the operator lays its watches over the namespaces, in one of three layouts:
// - cluster-wide (-A, or no namespaces given): one stream per resource, one peering;
// - a fixed list of names (minus exclusions): cluster-scoped resources once, and per
//   namespace a child scope with its gate, its peering and its streams (NamespaceCoverage
//   may serve many of them by one cluster-wide stream above watching.clusterWideAbove);
// - globs: the same per namespace, for namespaces followed as they come and go.
// Each namespace with a peering of its own has a gate (a Toggle under the operator's): its
// peering freezes only its streams, and its handlers (the reconcilers' freezeSignal).
// A resource with `namespaces` of its own in kobun.yaml gets a layout of its own, the same way
// (runtime/stream-wiring.ts reads the settings into each layout's options, and starts the peerings).

import type { KubeClient } from "../kube/index.ts";
import { resourceName, type Resource } from "../kube/index.ts";
import type { Health } from "../observability/index.ts";
import type { PeeringEvents } from "../peering/index.ts";
import type { Indexes, IndexedStream } from "../handling/index.ts";
import type { Store } from "../caching/index.ts";
import type { TaskScope } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import type { Toggle } from "../util/index.ts";
import { streamBudget } from "../kube/index.ts";
import type { WatchEvent } from "../watching/index.ts";
import { NamespaceCoverage, namespacesWatchedApart, type CoveredPlace } from "./coverage.ts";
import { followNamespaces } from "./namespaces.ts";
import type { ShardedLayout, StreamPart } from "./shard-streams.ts";
import {
  runResourceStream, type Activity, type StreamObserver, type StreamSelection, type StreamTimings,
} from "./resource-stream.ts";

/** The namespaces one layout serves (runtime/ reads them from the settings). */
export interface LayoutNamespaces {
  /**
   * Whether a namespace is served: its includes, minus exclusions like `!kube-*` (cluster-wide watches honour them
   * too).
   */
  matches(namespace: string): boolean;
  /** Every namespace: one stream per resource. */
  clusterWide: boolean;
  /** Cluster-wide because no namespace was given: warned about. */
  defaulted: boolean;
  /** A fixed list of names; null: globs, followed as namespaces come and go (unless cluster-wide). */
  fixed: readonly string[] | null;
  /** More served namespaces than this: one cluster-wide watch per resource, routed by namespace (coverage.ts). */
  clusterWideAbove: number;
}

/** Where a watched resource's events go (its reconciler). */
export interface EventConsumer {
  /** Takes every event; must not block. */
  accept(event: WatchEvent): void;
  /** Resolves once every event accepted so far is processed (readiness: the first LIST handled once). */
  settled(): Promise<void>;
}

/** One resource a layout watches. */
export interface WatchedResource {
  consumer: EventConsumer;
  selection: StreamSelection;
  /** Its one store (caching/): each of its streams keeps what it knows on a shelf there. */
  store: Store;
}

/** Where one peering runs: in `namespace` (null: the layout's one), under `gate`, for as long as `within` lasts. */
export interface PeeringPlace {
  namespace: string | null;
  within: TaskScope;
  gate: Toggle;
  /** Where a namespace's peering reads its object's events (a shared cluster-wide watch, or its own). */
  events?: PeeringEvents;
}

/** The peerings of one layout (runtime/ starts them; the layout says where). */
export interface LayoutPeering {
  /** Each served namespace has a peering and a gate of its own; else one peering for the layout. */
  perNamespace: boolean;
  /** The namespaces' Kopf-style peering objects: their watches are laid out (and budgeted) with the streams. */
  objects?: { resource: Resource; name: string };
  /** Starts one peering; absent: this layout runs none (a layout apart, gated by the operator's one). */
  start?(place: PeeringPlace): void;
  /** A served namespace's own gate under the operator's toggle, for as long as `within` lasts (perNamespace only). */
  gate(namespace: string, within: TaskScope): Toggle;
}

/** What one layout lays out; made by runtime/ from the settings. */
export interface LayoutOptions {
  client: KubeClient;
  logger: Logger;
  health: Health;
  /** The operator's freeze toggle. */
  toggle: Toggle;
  scope: TaskScope;
  graceMs: number;
  timings: StreamTimings;
  namespaces: LayoutNamespaces;
  peering: LayoutPeering;
  /** The resources laid out. */
  resources: ReadonlyMap<Resource, WatchedResource>;
  /** Sharding on: the owned shards filter the events and shape the watches (shard-streams.ts). */
  sharded?: ShardedLayout | undefined;
  /** The indexes: handlers wait for the first LIST of every stream they are kept from. */
  indexes?: Indexes;
  observers: {
    /** The metrics of a resource's streams. */
    metrics(resource: Resource): StreamObserver;
    /** Told of every event a stream delivers. */
    activity?: Activity;
  };
}

type Which = "all" | "namespaced" | "cluster-scoped";

/** Starts the streams (and says where the peerings run) of one layout, in `options.scope`. */
export function layOut(given: LayoutOptions): void {
  const options = { ...given, observers: { ...given.observers, metrics: madeOnce(given.observers.metrics) } };
  const { client, logger, health, toggle, scope, graceMs, peering } = options;
  const { maxLineBytes } = options.timings.watcher;
  const { matches, fixed, clusterWideAbove } = options.namespaces;
  // One peering (or none) for the layout; otherwise one per served namespace.
  const onePeering = !peering.perNamespace;
  // Namespaces with a Kopf-style peering object each: their peering watches are covered too.
  const gated = peering.objects !== undefined;
  const resources = [...options.resources.keys()];
  const namespaced = resources.filter((r) => r.namespaced).length;
  const peeringObjects = peering.objects && { resource: peering.objects.resource, name: peering.objects.name };
  const threshold = namespacesWatchedApart(clusterWideAbove, {
    perNamespace: namespaced + (gated ? 1 : 0), besides: resources.length - namespaced + 2, limit: streamBudget.limit,
  });
  const coverage = new NamespaceCoverage({
    threshold, configured: clusterWideAbove, expected: fixed?.length ?? 0, scope, matches, gated, logger,
    // A glob's namespaces are discovered (their RoleBindings may lag them); a fixed list's and the cluster-wide
    // streams are not.
    serve: (place) =>
      serveStreams(options, { ...place, which: "namespaced", discovered: place.namespace !== null && fixed === null }),
    ...(peeringObjects ? { peering: { client, ...peeringObjects, maxLineBytes } } : {}),
  });
  const peer = (namespace: string | null, within: TaskScope, gate: Toggle = toggle) => {
    if (!peering.start) return;
    const events = namespace === null ? undefined : coverage.peeringEvents(namespace);
    peering.start({ namespace, within, gate, ...(events ? { events } : {}) });
  };
  const startNamespace = (namespace: string, child: TaskScope) => {
    const gate = onePeering ? toggle : peering.gate(namespace, child);
    if (!onePeering) peer(namespace, child, gate);
    coverage.add(namespace, child, gate);
  };

  if (onePeering) peer(null, scope);
  if (options.namespaces.clusterWide) {
    if (options.namespaces.defaulted) {
      logger.warn("no namespaces given: watching the whole cluster (pass -n NS or -A to be explicit)");
    }
    if (!onePeering) peer(null, scope);
    serveStreams(options, { namespace: null, within: scope, which: "all" });
    return;
  }
  serveStreams(options, { namespace: null, within: scope, which: "cluster-scoped" });
  if (fixed) {
    for (const namespace of fixed) startNamespace(namespace, scope.child(namespace));
    return;
  }
  // Globs: follow namespaces as they come and go.
  const following = { client, matches, logger, health, graceMs, maxLineBytes, start: startNamespace };
  scope.spawn("namespaces", () => followNamespaces(following, scope));
}

/** Where serveStreams lays streams out, and of which resources. */
interface StreamsPlace extends CoveredPlace {
  which: Which;
  /** The namespace was found by a glob: a 403 is never fatal at once. */
  discovered?: boolean;
}

/**
 * Starts the streams of `which` resources: in `namespace`, or cluster-wide when null. A
 * cluster-wide stream of namespaced resources serving chosen namespaces is `routed`.
 */
function serveStreams(wiring: LayoutOptions, place: StreamsPlace): void {
  const { client, timings, health, logger, sharded } = wiring;
  const { matches } = wiring.namespaces;
  const { activity } = wiring.observers;
  const { namespace, within, which, gate = wiring.toggle, discovered = false, routed } = place;
  for (const [resource, { consumer, selection, store }] of wiring.resources) {
    if (which === "namespaced" && !resource.namespaced) continue;
    if (which === "cluster-scoped" && resource.namespaced) continue;
    const ns = resource.namespaced ? namespace : null;
    // Registered now (synchronously, before any stream lists): no handler slips in ahead.
    const indexed = wiring.indexes?.covers(resource) ? wiring.indexes.stream(resource, ns ?? "cluster") : undefined;
    const open = (part: StreamPart | undefined, s: AbortSignal) => {
      const route = routed?.(s);
      // A later batch of shards holds the handlers until its first LIST, as the first one did at start-up.
      const later = part && !part.first;
      const hold = later
        ? indexed && wiring.indexes!.stream(resource, `${ns ?? "cluster"} (${part.label})`, true)
        : indexed;
      const deliver = (event: WatchEvent) => {
        part?.saw?.(event);
        // Another replica's shard (the client-side filter, a batch's shard given up, or a synthetic delete after a
        // handover): not ours.
        if (part && "object" in event && !part.accepts(event.object)) return;
        route?.observe(event);
        // Cluster-wide watches still honour exclusions like `!kube-*`.
        const objectNs = "object" in event ? event.object.metadata.namespace : undefined;
        if (route && "object" in event ? !route.accepts(objectNs) : objectNs && !matches(objectNs)) return;
        consumer.accept(event);
      };
      const restarts =
        route || part?.restartSignal ? restartOn(route?.restartSignal, part?.restartSignal) : undefined;
      const streamLogger = logger.child({
        resource: resourceName(resource), ...(ns ? { namespace: ns } : {}),
        ...(part?.label ? { part: part.label } : {}),
      });
      return runResourceStream(
        {
          client, resource, namespace: ns, toggle: gate, timings, health, discovered, selection, store,
          observers: { metrics: wiring.observers.metrics(resource), ...(activity ? { activity } : {}) },
          logger: streamLogger,
          ...(part?.shardSelector ? { shardSelector: part.shardSelector } : {}),
          ...(part?.label ? { label: part.label } : {}),
          ...(later ? { gatesReadiness: false } : {}),
          ...(hold ? { indexed: part?.paused ? pausingAlso(hold, part.paused) : hold } : {}),
          deliver,
          processed: () => consumer.settled(),
          ...(restarts ? { restartSignal: restarts } : {}),
        },
        s,
      );
    };
    const name = `watch ${resourceName(resource)}@${ns ?? "cluster"}`;
    // A standby (no shard, so no stream) holds no handler up for the indexes until it takes one.
    // Shards taken client-side hold the handlers until the stream's LIST of them is through, as a batch's first
    // LIST does.
    const takeHold = () => indexed && wiring.indexes!.stream(resource, `${ns ?? "cluster"} (shards taken)`, true);
    if (sharded) sharded.serve({ resource, within, name, open, quiet: (quiet) => indexed?.paused(quiet), takeHold });
    else within.spawn(name, (s) => open(undefined, s));
  }
}

/**
 * The stream's hold, telling `paused` too when the stream waits out a freeze (the client-side take holds pause with
 * it).
 */
function pausingAlso(hold: IndexedStream, paused: (paused: boolean) => void): IndexedStream {
  return { listed: () => hold.listed(), end: () => hold.end(), paused: (now) => (hold.paused(now), paused(now)) };
}

/** A stream relists when the current signal of either source aborts (a namespace route's, a shard batch's). */
function restartOn(...sources: (undefined | (() => AbortSignal))[]): () => AbortSignal {
  const given = sources.filter((s): s is () => AbortSignal => s !== undefined);
  return given.length === 1 ? given[0]! : () => AbortSignal.any(given.map((s) => s()));
}

/**
 * A resource's stream metrics, made when its first stream opens and shared by the others (a shard batch, a
 * namespace, one opened again): they count per resource, and their series are bound once.
 */
function madeOnce(metrics: (resource: Resource) => StreamObserver): (resource: Resource) => StreamObserver {
  const made = new Map<Resource, StreamObserver>();
  return (resource) => {
    let observer = made.get(resource);
    if (!observer) made.set(resource, (observer = metrics(resource)));
    return observer;
  };
}
