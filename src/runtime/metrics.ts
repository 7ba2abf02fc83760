// The metrics that lower rooms report through interfaces of their own (kube/'s
// RequestObserver, watching/'s WatchObserver, sharding/'s ShardObserver): runtime/ is the one
// room that sees both those interfaces and observability/'s registry, so the wiring lives here.
// Names and labels are client-go's where the meaning is the same (rest_client_*), so existing
// dashboards read them.

import type { BudgetState } from "../kube/index.ts";
import type { RequestObserver } from "../kube/index.ts";
import type { HistogramSeries, MetricsRegistry, Series } from "../observability/index.ts";
import type { PeeringObserver } from "../peering/index.ts";
import type { QueueFigures, QueueObserver } from "../queueing/index.ts";
import type { ReconcileObserver, ReconcileResult } from "../reconciling/index.ts";
import type { ShardObserver } from "../sharding/index.ts";
import type { Toggle } from "../util/index.ts";
import type { WatchObserver, WatchRestartReason } from "../watching/index.ts";

/** client-go's buckets for rest_client_request_duration_seconds. */
const REQUEST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** rest_client_requests_total{code,method,host} and rest_client_request_duration_seconds{verb,host}. */
export function requestMetrics(registry: MetricsRegistry): RequestObserver {
  const total = registry.counter(
    "rest_client_requests_total", "Number of HTTP requests, partitioned by status code, method, and host.",
    ["code", "method", "host"],
  );
  const duration = registry.histogram(
    "rest_client_request_duration_seconds", "Request latency in seconds. Broken down by verb, and host.",
    REQUEST_BUCKETS, ["verb", "host"],
  );
  // Bound series, made once per host, method and code: a request costs two lookups in small
  // objects instead of walking the families' label maps (a client talks to one host).
  let boundHost = "";
  let totals: Record<string, Record<string, Series>> = Object.create(null);
  let durations: Record<string, HistogramSeries> = Object.create(null);
  return {
    requested(method, host, code, seconds) {
      if (host !== boundHost) [boundHost, totals, durations] = [host, Object.create(null), Object.create(null)];
      ((totals[method] ??= Object.create(null))[code] ??= total.labels(code, method, host)).inc();
      (durations[method] ??= duration.labels(method, host)).observe(seconds);
    },
  };
}

const EVENT_TYPES = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);

/**
 * A counter of something that went wrong, registered at its first increment: /metrics does not
 * name it before that happened (as it never has; its HELP is derived from its name, as it was).
 */
function countedOnFirstUse(
  registry: MetricsRegistry, name: string, labelNames: readonly string[] = [], values: readonly string[] = [],
): () => void {
  let series: Series | undefined;
  const help = `${name.replace(/_total$/, "").replace(/_/g, " ")}.`;
  return () => (series ??= registry.counter(name, help, labelNames).labels(...values)).inc();
}

/**
 * kobun_watch_events_total{resource,type} and kobun_watch_restarts_total{resource,reason} of one
 * resource's watchers, and kobun_watch_failures_total{resource} (a stream that failed:
 * streams/resource-stream.ts).
 */
export function watchMetrics(
  registry: MetricsRegistry, resource: string,
): WatchObserver & { frozen(): void; failed(): void } {
  const events = registry.counter(
    "kobun_watch_events_total", "Watch events received, by resource and event type.", ["resource", "type"],
  );
  const restarts = registry.counter(
    "kobun_watch_restarts_total",
    "Watch streams opened again, by resource and reason (410, timeout, stall, error, freeze).", ["resource", "reason"],
  );
  // Bound series, made once per type: an event costs one lookup in a small object, no allocation.
  const byType: Record<string, Series> = {};
  const byReason: Record<string, Series> = {};
  const restarted = (reason: WatchRestartReason | "freeze") =>
    (byReason[reason] ??= restarts.labels(resource, reason)).inc();
  return {
    // An unknown type from a server is one bounded label value, not a series per type it invents.
    event: (type) => (byType[type] ??= events.labels(resource, EVENT_TYPES.has(type) ? type : "unknown")).inc(),
    restarted,
    frozen: () => restarted("freeze"),
    failed: countedOnFirstUse(registry, "kobun_watch_failures_total", ["resource"], [resource]),
  };
}

/** kobun_watch_streams_open / _waiting and kobun_watch_connection_budget, read from the budget at scrape time. */
export function budgetMetrics(registry: MetricsRegistry, budget: { readonly state: BudgetState }): void {
  const gauge = (name: string, help: string, read: (state: BudgetState) => number) =>
    registry.collect(name, help, "gauge", [], () => [[[], read(budget.state)]]);
  gauge("kobun_watch_streams_open", "Watch streams holding a connection.", (state) => state.open);
  gauge(
    "kobun_watch_streams_waiting", "Watch streams waiting for a free connection (their objects are not seen).",
    (state) => state.waiting,
  );
  gauge("kobun_watch_connection_budget", "The most watch streams that may be open at once.", (state) => state.limit);
}

/**
 * kobun_frozen{scope}: 1 while the toggle of that scope (the operator, or a namespace) is frozen;
 * gone with its life.
 */
export function frozenMetric(registry: MetricsRegistry): (scope: string, toggle: Toggle, life: AbortSignal) => void {
  const toggles = new Map<string, Toggle>();
  const help = "1 while this scope's handling is frozen (a peer, a manual freeze, a lost lease).";
  registry.collect("kobun_frozen", help, "gauge", ["scope"], () =>
    [...toggles].map(([scope, toggle]) => [[scope], toggle.frozen ? 1 : 0] as [string[], number]),
  );
  return (scope, toggle, life) => {
    toggles.set(scope, toggle);
    life.addEventListener("abort", () => toggles.get(scope) === toggle && toggles.delete(scope), { once: true });
  };
}

/** controller-runtime's buckets for controller_runtime_reconcile_time_seconds. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
  1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
const RESULTS: readonly ReconcileResult[] = ["success", "error", "requeue", "requeue_after"];
const HANDLER_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * controller_runtime_reconcile_* / _active_workers / _max_concurrent_reconciles of one
 * resource (`controller` = its plural.group, as the issue names it), kobun's handler runs, and
 * the operator's (unlabelled) counts of failed and refused writes and abandoned runs.
 */
export function reconcileMetrics(
  registry: MetricsRegistry, controller: string, maxConcurrent: number,
): ReconcileObserver {
  const { results, errors, terminal, time, active } = controllerRuntimeSeries(registry, controller, maxConcurrent);
  const runs = registry.counter(
    "kobun_handler_runs_total", "Handler runs, by handler id, cause and outcome (success, retry, failure).",
    ["controller", "handler", "cause", "outcome"],
  );
  const duration = registry.histogram(
    "kobun_handler_duration_seconds", "How long a handler ran, by handler id.",
    HANDLER_BUCKETS, ["controller", "handler"],
  );
  // Bound series per handler (and cause, outcome): a handler run costs no label-map walk.
  // Null-prototype records: a handler id is the user's, and may be "constructor".
  const byHandler: Record<string, { runs: Record<string, Record<string, Series>>; duration: HistogramSeries }> =
    Object.create(null);
  return {
    began: () => active.inc(),
    reconciled(result: ReconcileResult, seconds) {
      active.inc(-1);
      results[result]!.inc();
      if (result === "error") errors.inc();
      time.observe(seconds);
    },
    terminalError: () => terminal.inc(),
    handlerRan(handler, cause, outcome, seconds) {
      const bound = (byHandler[handler] ??= {
        runs: Object.create(null), duration: duration.labels(controller, handler),
      });
      ((bound.runs[cause] ??= Object.create(null))[outcome] ??= runs.labels(controller, handler, cause, outcome)).inc();
      bound.duration.observe(seconds);
    },
    writeFailed: countedOnFirstUse(registry, "kobun_processing_failures_total"),
    writeRefused: countedOnFirstUse(registry, "kobun_processing_refusals_total"),
    handlerAbandoned: countedOnFirstUse(registry, "kobun_handlers_abandoned_total"),
    backgroundAbandoned: countedOnFirstUse(registry, "kobun_background_abandoned_total"),
  };
}

/**
 * controller-runtime's series of one controller, each at 0 from the start as controller-runtime's: a rate() or an
 * alert on `result="error"` or a terminal error reads 0, not "no data", before the first.
 */
function controllerRuntimeSeries(registry: MetricsRegistry, controller: string, maxConcurrent: number) {
  const total = registry.counter(
    "controller_runtime_reconcile_total", "Total number of reconciliations per controller", ["controller", "result"],
  );
  const results: Record<string, Series> = {};
  for (const result of RESULTS) results[result] = total.labels(controller, result);
  const perController = (name: string, help: string) => registry.counter(name, help, ["controller"]).labels(controller);
  const errors = perController(
    "controller_runtime_reconcile_errors_total", "Total number of reconciliation errors per controller",
  );
  const terminal = perController(
    "controller_runtime_terminal_reconcile_errors_total",
    "Total number of terminal reconciliation errors per controller",
  );
  const time = registry.histogram(
    "controller_runtime_reconcile_time_seconds", "Length of time per reconciliation per controller",
    RECONCILE_BUCKETS, ["controller"],
  ).labels(controller);
  const active = registry.gauge(
    "controller_runtime_active_workers", "Number of currently used workers per controller", ["controller"],
  ).labels(controller);
  active.set(0);
  registry.gauge(
    "controller_runtime_max_concurrent_reconciles", "Maximum number of concurrent reconciles per controller",
    ["controller"],
  ).set([controller], maxConcurrent);
  return { results, errors, terminal, time, active };
}

/** controller-runtime's buckets for workqueue_queue_duration_seconds and _work_duration_seconds: 10 ns to 1000 s. */
const QUEUE_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000];
/** controller-runtime's (client-go's own queues have `name` alone; dashboards of either read `name`). */
const QUEUE_LABELS = ["name", "controller"];
/** Per registry, each queue's reader of its gauges by name: one collected family serves them all. */
const queueReaders = new WeakMap<MetricsRegistry, Map<string, () => QueueFigures>>();

/**
 * The workqueue_* metrics of one queue as controller-runtime labels them: `name` and `controller`,
 * both the controller (plural.group).
 */
export function workqueueMetrics(registry: MetricsRegistry, name: string): QueueObserver {
  const adds = registry.counter("workqueue_adds_total", "Total number of adds handled by workqueue", QUEUE_LABELS)
    .labels(name, name);
  const retries = registry.counter(
    "workqueue_retries_total", "Total number of retries handled by workqueue", QUEUE_LABELS,
  ).labels(name, name);
  const queued = registry.histogram(
    "workqueue_queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested",
    QUEUE_BUCKETS, QUEUE_LABELS,
  ).labels(name, name);
  const work = registry.histogram(
    "workqueue_work_duration_seconds", "How long in seconds processing an item from workqueue takes.",
    QUEUE_BUCKETS, QUEUE_LABELS,
  ).labels(name, name);
  const readers = queueReaders.get(registry) ?? collectQueueGauges(registry);
  return {
    watch: (read) => void readers.set(name, read),
    added: () => adds.inc(),
    started: (seconds) => queued.observe(seconds),
    finished: (seconds) => work.observe(seconds),
    retried: () => retries.inc(),
  };
}

function collectQueueGauges(registry: MetricsRegistry): Map<string, () => QueueFigures> {
  const readers = new Map<string, () => QueueFigures>();
  queueReaders.set(registry, readers);
  const gauge = (metric: string, help: string, pick: (f: QueueFigures) => number) =>
    registry.collect(metric, help, "gauge", QUEUE_LABELS, () =>
      [...readers].map(([name, read]) => [[name, name], pick(read())] as [string[], number]));
  gauge("workqueue_depth", "Current depth of workqueue", (f) => f.depth);
  gauge(
    "workqueue_unfinished_work_seconds",
    "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
      "Large values indicate stuck threads.",
    (f) => f.unfinishedSeconds,
  );
  gauge(
    "workqueue_longest_running_processor_seconds",
    "How many seconds has the longest running processor for workqueue been running.", (f) => f.longestSeconds,
  );
  return readers;
}

/** kobun_peers_seen{scope} and kobun_lease_held{scope} of one peering or lease (scope as kobun_frozen's). */
export function peeringMetrics(registry: MetricsRegistry, scope: string): Omit<PeeringObserver, "peeringFailing"> {
  const peers = registry.gauge(
    "kobun_peers_seen", "Live peers other than this operator in the peering object, by scope.", ["scope"],
  ).labels(scope);
  const lease = registry.gauge(
    "kobun_lease_held", "1 while this replica holds the lease (peering mode lease), by scope.", ["scope"],
  ).labels(scope);
  return { peersSeen: (count) => peers.set(count), leaseHeld: (held) => lease.set(held ? 1 : 0) };
}

/**
 * kobun_shard_owned{shard} (1 per shard this replica works on; a shard given up loses its
 * series, so there are at most as many as shards owned), kobun_shards_owned,
 * kobun_shard_handovers_total{direction} (acquired, released, abandoned), and the coverage
 * seen from here: kobun_shards_without_live_owner and kobun_shards_with_several_owners.
 */
export function shardMetrics(registry: MetricsRegistry): ShardObserver {
  let owned: readonly number[] = [];
  registry.collect("kobun_shard_owned", "1 for each shard this replica owns (works on) now.", "gauge", ["shard"], () =>
    owned.map((shard) => [[String(shard)], 1] as [string[], number]));
  const count = registry.gauge("kobun_shards_owned", "How many shards this replica owns now.").labels();
  const handovers = registry.counter(
    "kobun_shard_handovers_total",
    "Shards taken (acquired) or given up cleanly (released) or without a clean handover (abandoned).", ["direction"],
  );
  const unowned = registry.gauge(
    "kobun_shards_without_live_owner", "Shards whose Lease has no live holder, as this replica sees them (a gap).",
  ).labels();
  const several = registry.gauge(
    "kobun_shards_with_several_owners",
    "Shards this replica works on while their Lease names another holder (an overlap).",
  ).labels();
  count.set(0);
  return {
    owned(shards) {
      owned = [...shards];
      count.set(shards.length);
    },
    handover: (direction) => handovers.labels(direction).inc(),
    coverage(found) {
      unowned.set(found.gaps.length + found.orphans.length);
      several.set(found.overlaps.length);
    },
  };
}
