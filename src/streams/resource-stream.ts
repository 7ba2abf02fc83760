// One resource stream: a Watcher for (resource, namespace) kept alive for the life of the
// operator. It waits while the operator is frozen, watches with a signal that the freeze
// toggle aborts (seed 000: the connection closes at once, nothing is read and dropped), and
// starts again with a fresh LIST on resume. A watcher that fails is reported unhealthy and
// restarted with backoff: never silently dead while the process looks alive. A 403 may end
// the operator instead (exit 5; forbidden.ts says when). What the stream knows it keeps on a
// shelf of its resource's store (caching/), from its first LIST until it ends for good.

import type { KubeClient } from "../kube/index.ts";
import { resourceName, type Resource } from "../kube/index.ts";
import { Backoff } from "../util/index.ts";
import { supervise } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import type { Toggle } from "../util/index.ts";
import { Watcher, type WatcherOptions } from "../watching/index.ts";
import type { WatchEvent, WatchObserver } from "../watching/index.ts";
import type { Health } from "../observability/index.ts";
import type { IndexedStream } from "../handling/index.ts";
import type { Shelf, Store } from "../caching/index.ts";
import { ForbiddenRule } from "./forbidden.ts";

/** How a stream watches and restarts (runtime/ reads them from kobun.yaml's `watching`, given in seconds there). */
export interface StreamTimings {
  /** The watcher's own: page size, timeouts, and the longest watch line accepted (bytes). */
  watcher: Pick<WatcherOptions, "pageSize" | "serverTimeoutSeconds" | "inactivityTimeoutMs"> & { maxLineBytes: number };
  /** Between failed attempts of the stream, and the watcher's reconnects (which add jitter, not the factor). */
  backoff: { initialMs: number; maxMs: number; factor: number };
  /**
   * Up this long after a complete LIST, the stream worked: its backoff and its count of 403s start over (and the
   * watcher's reconnect backoff, after as long without a failure).
   */
  healthyAfterMs: number;
}

/** kobun.yaml's selectors of one resource: they go with every LIST and WATCH of its streams. */
export interface Selectors {
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
}

/** What a resource's streams select. */
export interface StreamSelection {
  /** kobun.yaml's resources: entry for this resource: its selectors go with every LIST and WATCH. */
  selectors?: Selectors | undefined;
  /** Receive only the objects' metadata (PartialObjectMetadata). */
  metadataOnly?: boolean;
}

/** A stream's metrics (runtime/ wires them to the registry): the watcher's, and the restarts a freeze makes. */
/**
 * What a stream tells the metrics: the watcher's events and restarts, a freeze, a failure
 * (kobun_watch_failures_total).
 */
export type StreamObserver = WatchObserver & { frozen(): void; failed(): void };

/** What the streams tell the process: a watch event parsed (a sleeping heap pacer looks again). */
export type Activity = () => void;

/** Who hears of a stream's life: its metrics, and the process of every event; neither when not given. */
export interface StreamObservers {
  metrics?: StreamObserver;
  activity?: Activity;
}

export interface StreamOptions {
  client: KubeClient;
  resource: Resource;
  namespace: string | null;
  toggle: Toggle;
  timings: StreamTimings;
  health: Health;
  logger: Logger;
  /** The namespace was found by a glob (its RoleBinding may lag it): a 403 is never fatal at once (forbidden.ts). */
  discovered?: boolean;
  /** Receives every event; must not block (the queue behind it decides what to do). */
  deliver(event: WatchEvent): void;
  /** Resolves once every event delivered so far is processed (for readiness: the first list handled once). */
  processed?(): Promise<void>;
  /** When the signal this returns aborts, the stream relists (taken afresh for every start). */
  restartSignal?: () => AbortSignal;
  selection?: StreamSelection;
  /**
   * The resource's store (caching/): the stream keeps what it knows on a shelf of its own there,
   * for as long as it runs. Default: a store of its own.
   */
  store?: Store;
  /** Sharding: the `shardSelector` for each (re)start; undefined sends none. */
  shardSelector?: () => string | undefined;
  /** Names this stream apart from its siblings of the same resource and namespace (one per batch of shards). */
  label?: string;
  /** false: its first LIST does not hold readiness up (shards taken after start-up). */
  gatesReadiness?: boolean;
  /** An index is kept from this resource: handlers wait for this stream's first LIST, unless it waits out a freeze. */
  indexed?: IndexedStream;
  observers?: StreamObservers;
}

const unobserved: StreamObserver = { event() {}, restarted() {}, frozen() {}, failed() {} };

export async function runResourceStream(options: StreamOptions, signal: AbortSignal): Promise<void> {
  const { client, resource, namespace, toggle, timings, health, logger, deliver } = options;
  const where = `${namespace ?? "(cluster)"}${options.label ? ` (${options.label})` : ""}`;
  // Its problem ends with the stream (a namespace that goes away takes its 403 along).
  const watchName = `watch ${resourceName(resource)} in ${where}`;
  const component = health.component(watchName, signal);
  // Ready once the first list was handled once; a relist later (410, resume) keeps it ready.
  const readiness = options.gatesReadiness === false ? { ready() {} } : health.readiness.gate(watchName, signal);
  let listed = false;
  let attempts = 0;
  const metrics = options.observers?.metrics ?? unobserved;
  const shelf = options.store?.shelf(where);
  const watcher = new Watcher(client, resource, watcherOptions(options, shelf, metrics));
  const forbidden = new ForbiddenRule({ fatalAtOnce: !options.discovered, healthyAfterMs: timings.healthyAfterMs });
  const backoff = restartBackoff(timings);

  const { indexed } = options;
  await supervise(
    {
      ready: async (s) => {
        // An attempt ended and the gate is closed: a freeze closed the stream (one restart for the metrics).
        if (attempts++ > 0 && toggle.frozen) metrics.frozen();
        if (!toggle.frozen) return toggle.waitRunning(s);
        indexed?.paused(true);
        const running = await toggle.waitRunning(s);
        indexed?.paused(false);
        return running;
      },
      attemptSignals: () => [toggle.runningSignal, options.restartSignal?.()],
      open: (s) => watcher.events(s),
      each: (event) => {
        forbidden.saw(event);
        if (event.type === "relist-done") {
          component.clear();
          backoff.reset();
        }
        deliver(event);
        options.observers?.activity?.(); // what a watch delivers is parsed objects: a sleeping heap pacer looks again
        if (event.type === "relist-done" && !listed) {
          listed = true;
          indexed?.listed();
          void (options.processed?.() ?? Promise.resolve()).then(() => readiness.ready());
        }
      },
      delays: backoff,
      failed: (error, { delayMs }) => {
        forbidden.failed(error); // throws when a 403 ends the operator (exit 5)
        const message = error instanceof Error ? error.message : String(error);
        component.fail(message);
        metrics.failed();
        const facts = { resource: resourceName(resource), namespace: where, error: message, retryInMs: delayMs };
        logger.error("watching failed; restarting", facts);
      },
    },
    signal,
  ).finally(() => {
    indexed?.end();
    shelf?.close(); // what only this stream knew is known no more
  });
}

/** Between the stream's failed attempts; it starts over once the stream worked for `healthyAfterMs`. */
function restartBackoff({ backoff, healthyAfterMs }: StreamTimings): Backoff {
  const { initialMs: initial, maxMs: max, factor } = backoff;
  return new Backoff({ initial, max, factor, resetAfter: healthyAfterMs });
}

/**
 * The stream's watcher's options: the timings' own, its reconnects paced by the stream's backoff (jittered, reset
 * once healthy), what it selects, its shelf, and who hears of its events.
 */
function watcherOptions(options: StreamOptions, shelf: Shelf | undefined, observer: StreamObserver): WatcherOptions {
  const { namespace, logger, timings } = options;
  const { initialMs, maxMs } = timings.backoff;
  const backoff = { initialMs, maxMs, resetAfterMs: timings.healthyAfterMs };
  return { ...timings.watcher, backoff, ...selection(options, shelf), namespace, logger, observer };
}

/** What the stream's LISTs and WATCHes select (kobun.yaml's selectors, the shards, metadata only), and its shelf. */
function selection(options: StreamOptions, shelf: Shelf | undefined): WatcherOptions {
  const { metadataOnly, selectors } = options.selection ?? {};
  return {
    ...(shelf ? { shelf } : {}),
    ...(metadataOnly ? { metadataOnly: true } : {}),
    ...(selectors?.labelSelector ? { labelSelector: selectors.labelSelector } : {}),
    ...(selectors?.fieldSelector ? { fieldSelector: selectors.fieldSelector } : {}),
    ...(options.shardSelector ? { shardSelector: options.shardSelector } : {}),
  };
}
