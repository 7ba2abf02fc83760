// How the operator lays its watches over the namespaces, in one of three layouts:
// - cluster-wide (-A, or no namespaces given): one stream per resource, one peering;
// - a fixed list of names (minus exclusions): cluster-scoped resources once, and per
//   namespace a child scope with its gate, its peering and its streams (NamespaceCoverage
//   may serve many of them by one cluster-wide stream above watching.clusterWideAbove);
// - globs: the same per namespace, for namespaces followed as they come and go.
// Each namespace with a peering of its own has a gate (a Toggle under the operator's): its
// peering freezes only its streams, and its handlers (the reconcilers' freezeSignal).
// A resource with `namespaces` of its own in kobun.yaml gets a layout of its own, the same way.

import { fixedNamespaces, namespaceMatcher, resourceNamespaces, type ResourceSettings, type Settings } from "../config/index.ts";
import type { KubeClient } from "../kube/client.ts";
import { resourceName, type Resource } from "../kube/types.ts";
import type { Health } from "../observability/health.ts";
import { peeringResource } from "../peering/index.ts";
import type { Reconciler } from "../reconciling/reconciler.ts";
import { readsDeletedBodies } from "../reconciling/options.ts";
import type { Registry } from "../handling/registry.ts";
import type { Indexes, IndexedStream } from "../handling/indexes.ts";
import { aborted } from "../util/abort.ts";
import type { Logger } from "../util/log.ts";
import type { TaskScope } from "../util/scope.ts";
import { Toggle } from "../util/toggle.ts";
import { streamBudget } from "../kube/budget.ts";
import { NamespaceCoverage, namespacesWatchedApart, type RoutedStream } from "./coverage.ts";
import { followNamespaces } from "./namespaces.ts";
import { startPeering } from "./peering.ts";
import type { ShardedStreams } from "./sharding.ts";
import { peeringMetrics } from "./metrics.ts";
import type { StreamPart } from "./shard-streams.ts";
import { runResourceStream } from "./streams.ts";
import type { WatchEvent } from "../watching/types.ts";

/** What the layout wires together; made by operate(). */
export interface Wiring {
  client: KubeClient;
  settings: Settings;
  logger: Logger;
  health: Health;
  /** The operator's freeze toggle. */
  toggle: Toggle;
  scope: TaskScope;
  graceMs: number;
  /** The handled resources, each with its reconciler. */
  resources: Resource[];
  reconcilers: Map<Resource, Reconciler>;
  /** The handlers (what the streams keep of known objects depends on them). */
  registry: Registry;
  /** kobun.yaml's resources: entries of the handled resources that have one. */
  configs: Map<Resource, ResourceSettings>;
  /** The resources watched metadata-only (why, for the log). */
  metadataOnly: Map<Resource, string>;
  /** Filled here: the gates of namespaces with a peering of their own. */
  gates: Map<string, Toggle>;
  /** Registers a toggle for the kobun_frozen metric. */
  frozen(scope: string, toggle: Toggle, life: AbortSignal): void;
  /** Resolves once the handlers have finished (peering leaves only then). */
  handlersDone: Promise<void>;
  peering: { mandatory: boolean; id?: string };
  /** Sharding on: the owned shards filter the events and shape the watches (sharding.ts). */
  sharded?: ShardedStreams | undefined;
  /** The indexes: handlers wait for the first LIST of every stream they are kept from. */
  indexes?: Indexes;
}

type Which = "all" | "namespaced" | "cluster-scoped";

/**
 * Starts the streams and peerings of the settings' layout, in `wiring.scope`. A resource whose
 * kobun.yaml entry gives its own `namespaces` is laid out apart, in a child scope, by the same
 * rules, under the operator's one peering (resources.ts's checkResourceKeys: there is only one then).
 */
export function serveLayout(wiring: Wiring): void {
  const apart = new Map<Resource, Reconciler>();
  const together = new Map<Resource, Reconciler>();
  for (const [resource, reconciler] of wiring.reconcilers) (wiring.configs.get(resource)?.namespaces ? apart : together).set(resource, reconciler);
  layOut({ ...wiring, resources: wiring.resources.filter((r) => together.has(r)), reconcilers: together }, true);
  for (const [resource, reconciler] of apart) {
    const namespaces = resourceNamespaces(wiring.configs.get(resource)!.namespaces)!;
    const scope = wiring.scope.child(`resource ${resourceName(resource)}`);
    layOut({ ...wiring, settings: { ...wiring.settings, namespaces }, scope, resources: [resource], reconcilers: new Map([[resource, reconciler]]) }, false);
  }
}

/** One layout: `wiring`'s resources over `wiring.settings.namespaces`; `peers`: this layout runs the operator's peering. */
function layOut(wiring: Wiring, peers: boolean): void {
  const { client, settings, logger, health, toggle, scope, graceMs } = wiring;
  const matches = namespaceMatcher([...settings.namespaces.include], [...settings.namespaces.exclude]);
  // One peering object for the cluster (or one Lease); otherwise one per served namespace. A
  // layout apart has none of its own: the operator's one peering gates it.
  const onePeering = !peers || settings.peering.clusterwide || settings.peering.mode === "lease";
  const fixed = settings.namespaces.include.length ? fixedNamespaces(settings) : null;
  const notices = new Set<string>();
  // Namespaces with a Kopf-style peering object each: their peering watches are covered too.
  const gated = !onePeering && !settings.peering.standalone;
  const namespaced = wiring.resources.filter((r) => r.namespaced).length;
  const threshold = namespacesWatchedApart(settings.watching.clusterWideAbove, {
    perNamespace: namespaced + (gated ? 1 : 0), besides: wiring.resources.length - namespaced + 2, limit: streamBudget.limit,
  });
  const coverage = new NamespaceCoverage({
    threshold, configured: settings.watching.clusterWideAbove, expected: fixed?.length ?? 0, scope, matches, gated, logger,
    // A glob's namespaces are discovered (their RoleBindings may lag them); a fixed list's and the cluster-wide streams are not.
    serve: (namespace, within, gate, routed) => serveStreams(wiring, matches, namespace, within, "namespaced", gate, namespace !== null && fixed === null, routed),
    ...(gated ? { peering: { client, resource: peeringResource(settings.peering.group, true), name: settings.peering.name, maxLineBytes: settings.watching.lineLimit } } : {}),
  });
  const peer = (namespace: string | null, within: TaskScope, gate: Toggle = toggle) => {
    if (!peers) return;
    const events = namespace === null ? undefined : coverage.peeringEvents(namespace);
    startPeering({
      client, toggle: gate, settings, logger, namespace, scope: within, handlersDone: () => wiring.handlersDone, notices,
      mandatory: wiring.peering.mandatory,
      ...(wiring.peering.id ? { id: wiring.peering.id } : {}),
      ...(events ? { events } : {}),
      observer: { ...peeringMetrics(health.metrics, namespace ?? "operator"), peeringFailing: peeringProblem(health, namespace, within.signal) },
    });
  };
  const startNamespace = (namespace: string, child: TaskScope) => {
    const gate = onePeering ? toggle : namespaceGate(wiring, child, namespace);
    if (!onePeering) peer(namespace, child, gate);
    coverage.add(namespace, child, gate);
  };

  if (onePeering) peer(null, scope);
  if (settings.namespaces.allNamespaces || fixed === null && settings.namespaces.include.length === 0) {
    if (settings.namespaces.defaulted) logger.warn("no namespaces given: watching the whole cluster (pass -n NS or -A to be explicit)");
    if (!onePeering) peer(null, scope);
    serveStreams(wiring, matches, null, scope, "all");
    return;
  }
  serveStreams(wiring, matches, null, scope, "cluster-scoped");
  if (fixed) {
    for (const namespace of fixed) startNamespace(namespace, scope.child(namespace));
    return;
  }
  // Globs: follow namespaces as they come and go.
  scope.spawn("namespaces", () => followNamespaces({ client, matches, logger, health, graceMs, maxLineBytes: settings.watching.lineLimit, start: startNamespace }, scope));
}

/**
 * Starts the streams of `which` resources: in `namespace`, or cluster-wide when null. A
 * cluster-wide stream of namespaced resources serving chosen namespaces is `routed`.
 */
function serveStreams(
  wiring: Wiring, matches: (namespace: string) => boolean, namespace: string | null, within: TaskScope, which: Which,
  gate: Toggle = wiring.toggle, discovered = false, routed?: (life: AbortSignal) => RoutedStream,
): void {
  const { client, settings, health, logger, sharded } = wiring;
  for (const [resource, reconciler] of wiring.reconcilers) {
    if (which === "namespaced" && !resource.namespaced) continue;
    if (which === "cluster-scoped" && resource.namespaced) continue;
    const ns = resource.namespaced ? namespace : null;
    // Registered now (synchronously, before any stream lists): no handler slips in ahead.
    const indexed = wiring.indexes?.covers(resource) ? wiring.indexes.stream(resource, ns ?? "cluster") : undefined;
    const open = (part: StreamPart | undefined, s: AbortSignal) => {
      const route = routed?.(s);
      // A later batch of shards holds the handlers until its first LIST, as the first one did at start-up.
      const hold = part && !part.first ? (indexed ? wiring.indexes!.stream(resource, `${ns ?? "cluster"} (${part.label})`, true) : undefined) : indexed;
      const deliver = (event: WatchEvent) => {
        part?.saw?.(event);
        // Another replica's shard (the client-side filter, a batch's shard given up, or a synthetic delete after a handover): not ours.
        if (part && "object" in event && !part.accepts(event.object)) return;
        route?.observe(event);
        // Cluster-wide watches still honour exclusions like `!kube-*`.
        const objectNs = "object" in event ? event.object.metadata.namespace : undefined;
        if (route && "object" in event ? !route.accepts(objectNs) : objectNs && !matches(objectNs)) return;
        reconciler.accept(event);
      };
      return runResourceStream(
        {
          client, resource, namespace: ns, toggle: gate, settings, health, discovered, config: wiring.configs.get(resource), metadataOnly: wiring.metadataOnly.has(resource),
          // Bodies of known objects are kept for the reconciler's on.event handlers (a deletion's body); else identities.
          keep: readsDeletedBodies(wiring.registry, resource) ? "bodies" : "identity",
          logger: logger.child({ resource: resourceName(resource), ...(ns ? { namespace: ns } : {}), ...(part?.label ? { part: part.label } : {}) }),
          ...(part?.shardSelector ? { shardSelector: part.shardSelector } : {}),
          ...(part?.label ? { label: part.label } : {}),
          ...(part && !part.first ? { gatesReadiness: false } : {}),
          ...(hold ? { indexed: part?.paused ? pausingAlso(hold, part.paused) : hold } : {}),
          deliver,
          processed: () => reconciler.settled(),
          ...(route || part?.restartSignal ? { restartSignal: restartOn(route?.restartSignal, part?.restartSignal) } : {}),
        },
        s,
      );
    };
    const name = `watch ${resourceName(resource)}@${ns ?? "cluster"}`;
    // A standby (no shard, so no stream) holds no handler up for the indexes until it takes one.
    // Shards taken client-side hold the handlers until the stream's LIST of them is through, as a batch's first LIST does.
    const takeHold = () => (indexed ? wiring.indexes!.stream(resource, `${ns ?? "cluster"} (shards taken)`, true) : undefined);
    if (sharded) sharded.serve(resource, within, name, open, (quiet) => indexed?.paused(quiet), takeHold);
    else within.spawn(name, (s) => open(undefined, s));
  }
}

/** A namespace's own gate: its peering freezes only its streams (and it follows the operator's). */
function namespaceGate(wiring: Wiring, within: TaskScope, namespace: string): Toggle {
  const gate = new Toggle(wiring.toggle);
  wiring.gates.set(namespace, gate);
  wiring.frozen(namespace, gate, within.signal);
  within.spawn("gate", async (s) => {
    await aborted(s);
    if (wiring.gates.get(namespace) === gate) wiring.gates.delete(namespace);
    gate.dispose();
  });
  return gate;
}

/** A peering that cannot follow its object, as a /healthz problem of its own, for as long as `life` lasts. */
function peeringProblem(health: Health, namespace: string | null, life: AbortSignal): (why: string | null) => void {
  const component = health.component(`peering ${namespace === null ? "of the operator" : `in ${namespace}`}`, life);
  return (why) => (why === null ? component.clear() : component.fail(why));
}

/** The stream's hold, telling `paused` too when the stream waits out a freeze (the client-side take holds pause with it). */
function pausingAlso(hold: IndexedStream, paused: (paused: boolean) => void): IndexedStream {
  return { listed: () => hold.listed(), end: () => hold.end(), paused: (now) => (hold.paused(now), paused(now)) };
}

/** A stream relists when the current signal of either source aborts (a namespace route's, a shard batch's). */
function restartOn(...sources: (undefined | (() => AbortSignal))[]): () => AbortSignal {
  const given = sources.filter((s): s is () => AbortSignal => s !== undefined);
  return given.length === 1 ? given[0]! : () => AbortSignal.any(given.map((s) => s()));
}
