// How the namespaced resources (and per-namespace peering objects) of the served namespaces
// are watched: one stream per namespace while there are few, and above
// `watching.clusterWideAbove` namespaces ONE cluster-wide stream per resource, its events
// routed to the namespaces served. The process has only so many connection slots
// (kube/budget.ts), and a watch per namespace and resource runs out of them at a few hundred.
// The switch is one way: a glob that grows past the threshold stays cluster-wide. The
// threshold counts namespaces, the budget streams: with several resources (and a peering per
// namespace) the switch comes sooner, where the namespaces' streams would no longer fit.
//
// A namespace with a peering of its own cannot close a shared stream when it freezes, so its
// events are dropped while it is frozen (or not yet served) and, once it runs, the shared
// stream relists (coalesced: one relist at a time, one more after it if asked meanwhile), so
// nothing that changed meanwhile goes unnoticed, and the objects whose handlers the freeze
// aborted are handled again, as after a per-namespace resume.

import type { KubeClient } from "../kube/index.ts";
import type { Resource } from "../kube/index.ts";
import { PeeringFeed, type PeeringEvents } from "../peering/index.ts";
import { aborted, linkedSignal } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import type { TaskScope } from "../util/index.ts";
import type { Toggle } from "../util/index.ts";
import type { WatchEvent } from "../watching/index.ts";
import { Watcher } from "../watching/index.ts";

/** What a cluster-wide stream of namespaced resources needs from the coverage. */
export interface RoutedStream {
  /** Whether an event of an object in `namespace` is for us now. */
  accepts(namespace: string | undefined): boolean;
  /** A signal that aborts when the stream must relist; take it afresh for every (re)start. */
  restartSignal(): AbortSignal;
  /** Sees every event, to know when a relist is under way. */
  observe(event: WatchEvent): void;
}

/** What watching namespaces apart costs in streams, and what the budget has room for. */
export interface StreamCounts {
  /** Streams one namespace served apart costs: one per namespaced resource, one more for its own peering. */
  perNamespace: number;
  /**
   * Streams open whatever the namespaces: cluster-scoped resources, the namespace watch, a cluster peering or
   * Lease.
   */
  besides: number;
  /** The most streams open at once (kube/budget.ts). */
  limit: number;
}

/**
 * The most namespaces watched apart: `clusterWideAbove`, or fewer when their streams would not
 * fit the budget beside the others' and the cluster-wide streams that replace them (which open
 * while theirs close). `kobun manifests` grants by the same number.
 */
export function namespacesWatchedApart(clusterWideAbove: number, streams: StreamCounts): number {
  if (streams.perNamespace === 0) return clusterWideAbove;
  const room = streams.limit - streams.besides - streams.perNamespace;
  return Math.max(0, Math.min(clusterWideAbove, Math.floor(room / streams.perNamespace)));
}

/** Where the coverage serves namespaced resources' streams. */
export interface CoveredPlace {
  /** The namespace, or null: cluster-wide. */
  namespace: string | null;
  /** The streams run until it ends. */
  within: TaskScope;
  /** The toggle the streams wait on; the operator's when not given. */
  gate?: Toggle;
  /**
   * A cluster-wide stream serving chosen namespaces: each stream is routed by a `routed(life)` of its own, for as
   * long as `life` lasts.
   */
  routed?: (life: AbortSignal) => RoutedStream;
}

export interface CoverageOptions {
  /** More served namespaces than this: cluster-wide streams (see namespacesWatchedApart). */
  threshold: number;
  /** watching.clusterWideAbove as configured, to say why when the budget lowered it. */
  configured: number;
  /** How many namespaces are known to come (a fixed list): above the threshold, cluster-wide from the start. */
  expected: number;
  /** The scope of the cluster-wide streams (the operator's). */
  scope: TaskScope;
  matches(namespace: string): boolean;
  /** Namespaces have peerings (gates) of their own: route by each one's gate. */
  gated: boolean;
  logger: Logger;
  /** Starts the namespaced resources' streams of `place`. */
  serve(place: CoveredPlace): void;
  /** The namespaced peering resource and object name, when namespaces have a peering of their own. */
  peering?: { client: KubeClient; resource: Resource; name: string; maxLineBytes: number };
}

interface Served {
  gate: Toggle;
  /** The namespace's own streams while not cluster-wide. */
  streams?: TaskScope;
  /** The per-namespace peering watch, ended by the switch. */
  switched: AbortController;
}

export class NamespaceCoverage {
  private wide = false;
  private readonly served = new Map<string, Served>();
  /**
   * Namespaces whose events a cluster-wide stream dropped, or whose handlers a freeze aborted: relist once they
   * run.
   */
  private readonly dropped = new Set<string>();
  private readonly relists = new Set<Relist>();
  private feed: PeeringFeed | undefined;

  constructor(private readonly options: CoverageOptions) {
    if (options.expected > options.threshold) this.goWide(options.expected);
  }

  get clusterWide(): boolean {
    return this.wide;
  }

  /** Serves `namespace` inside `within` (closed when it goes) under its `gate`. */
  add(namespace: string, within: TaskScope, gate: Toggle): void {
    const entry: Served = { gate, switched: new AbortController() };
    this.served.set(namespace, entry);
    const stopFollowing = gate.onChange((frozen) => {
      if (!frozen) return this.resumed(namespace);
      // Its running handlers are aborted and their cycles lost; a shared stream stays open, so
      // only a relist brings those objects back (a namespace's own stream relists on resume).
      if (this.wide && this.options.gated) this.dropped.add(namespace);
    });
    within.spawn("coverage", async (s) => {
      await aborted(s);
      stopFollowing();
      if (this.served.get(namespace) === entry) this.served.delete(namespace);
      this.dropped.delete(namespace);
    });
    if (!this.wide && this.served.size > this.options.threshold) this.goWide(this.served.size);
    if (this.wide) this.resumed(namespace);
    else {
      entry.streams = within.child("streams");
      this.options.serve({ namespace, within: entry.streams, gate });
    }
  }

  /** Where `namespace`'s Peering reads its peering object from: its own watch, or the shared one. */
  peeringEvents(namespace: string): PeeringEvents | undefined {
    const peering = this.options.peering;
    if (!peering) return undefined;
    const { logger } = this.options;
    const { client, resource, maxLineBytes } = peering;
    const own = new Watcher(client, resource, { namespace, logger, maxLineBytes });
    const self = this;
    return async function* (signal) {
      const entry = self.served.get(namespace);
      if (!self.wide && entry) {
        const link = linkedSignal(signal, entry.switched.signal);
        try {
          yield* own.events(link.signal);
        } finally {
          link.dispose();
        }
        if (signal.aborted) return;
      }
      yield* self.startFeed().events(namespace)(signal);
    };
  }

  private goWide(namespaces: number): void {
    this.wide = true;
    const { logger, scope, serve } = this.options;
    const { threshold, configured } = this.options;
    logger.info("serving many namespaces: one cluster-wide watch per resource, routed by namespace", {
      namespaces, clusterWideAbove: configured,
      ...(threshold < configured
        ? { wideAbove: threshold, why: "a watch per namespace and resource would not fit the connection budget" }
        : {}),
    });
    // One per stream, and gone with it: a sharded replica starts a stream per batch of shards taken.
    const routed = (life: AbortSignal): RoutedStream => {
      const relist = new Relist();
      this.relists.add(relist);
      void aborted(life).then(() => this.relists.delete(relist));
      return {
        accepts: (namespace) => this.accepts(namespace), restartSignal: () => relist.signal(),
        observe: (event) => relist.observe(event),
      };
    };
    serve({ namespace: null, within: scope, routed });
    for (const entry of this.served.values()) {
      void entry.streams?.close(0);
      entry.streams = undefined;
      entry.switched.abort();
    }
  }

  /** Starts the shared peering watch on first use. */
  private startFeed(): PeeringFeed {
    if (!this.feed) {
      const { client, resource, name, maxLineBytes } = this.options.peering!;
      const feed = (this.feed = new PeeringFeed(client, resource, name, this.options.logger, maxLineBytes));
      this.options.scope.spawn("watch peering (cluster-wide)", (s) => feed.run(s));
    }
    return this.feed;
  }

  private accepts(namespace: string | undefined): boolean {
    if (namespace === undefined || !this.options.matches(namespace)) return false;
    if (!this.options.gated) return true;
    const entry = this.served.get(namespace);
    if (entry && !entry.gate.frozen) return true;
    this.dropped.add(namespace);
    return false;
  }

  private resumed(namespace: string): void {
    const entry = this.served.get(namespace);
    if (!this.wide || !this.dropped.has(namespace) || !entry || entry.gate.frozen) return;
    this.dropped.delete(namespace);
    for (const relist of this.relists) relist.request();
  }
}

/** One stream's relists on request, coalesced: asked during a relist, it relists once more after it. */
class Relist {
  private controller = new AbortController();
  private listing = false;
  private again = false;

  signal(): AbortSignal {
    if (this.controller.signal.aborted) this.controller = new AbortController();
    return this.controller.signal;
  }

  request(): void {
    if (this.listing) this.again = true;
    else this.controller.abort();
  }

  observe(event: WatchEvent): void {
    if (event.type === "relist-start") this.listing = true;
    if (event.type !== "relist-done") return;
    this.listing = false;
    if (this.again) {
      this.again = false;
      this.controller.abort();
    }
  }
}
