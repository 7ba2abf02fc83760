// The metrics that lower rooms report through interfaces of their own (kube/'s
// RequestObserver, watching/'s WatchObserver): runtime/ is the one room that sees both those
// interfaces and observability/'s registry, so the wiring lives here. Names and labels are
// client-go's where the meaning is the same (rest_client_*), so existing dashboards read them.

import type { BudgetState } from "../kube/budget.ts";
import type { RequestObserver } from "../kube/observer.ts";
import type { MetricsRegistry, Series } from "../observability/metrics.ts";
import type { ReconcileObserver, ReconcileResult } from "../reconciling/reconciler.ts";
import type { Toggle } from "../util/toggle.ts";
import type { WatchObserver, WatchRestartReason } from "../watching/types.ts";

/** client-go's buckets for rest_client_request_duration_seconds. */
const REQUEST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** rest_client_requests_total{code,method,host} and rest_client_request_duration_seconds{verb,host}. */
export function requestMetrics(registry: MetricsRegistry): RequestObserver {
  const total = registry.counter("rest_client_requests_total", "Number of HTTP requests, partitioned by status code, method, and host.", ["code", "method", "host"]);
  const duration = registry.histogram("rest_client_request_duration_seconds", "Request latency in seconds. Broken down by verb, and host.", REQUEST_BUCKETS, ["verb", "host"]);
  return {
    requested(method, host, code, seconds) {
      total.labels(code, method, host).inc();
      duration.labels(method, host).observe(seconds);
    },
  };
}

const EVENT_TYPES = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);

/** kobun_watch_events_total{resource,type} and kobun_watch_restarts_total{resource,reason} of one resource's watchers. */
export function watchMetrics(registry: MetricsRegistry, resource: string): WatchObserver & { frozen(): void } {
  const events = registry.counter("kobun_watch_events_total", "Watch events received, by resource and event type.", ["resource", "type"]);
  const restarts = registry.counter("kobun_watch_restarts_total", "Watch streams opened again, by resource and reason (410, timeout, stall, error, freeze).", ["resource", "reason"]);
  // Bound series, made once per type: an event costs one lookup in a small object, no allocation.
  const byType: Record<string, Series> = {};
  const byReason: Record<string, Series> = {};
  const restarted = (reason: WatchRestartReason | "freeze") => (byReason[reason] ??= restarts.labels(resource, reason)).inc();
  return {
    // An unknown type from a server is one bounded label value, not a series per type it invents.
    event: (type) => (byType[type] ??= events.labels(resource, EVENT_TYPES.has(type) ? type : "unknown")).inc(),
    restarted,
    frozen: () => restarted("freeze"),
  };
}

/** kobun_watch_streams_open / _waiting and kobun_watch_connection_budget, read from the budget at scrape time. */
export function budgetMetrics(registry: MetricsRegistry, budget: { readonly state: BudgetState }): void {
  registry.collect("kobun_watch_streams_open", "Watch streams holding a connection.", "gauge", [], () => [[[], budget.state.open]]);
  registry.collect("kobun_watch_streams_waiting", "Watch streams waiting for a free connection (their objects are not seen).", "gauge", [], () => [[[], budget.state.waiting]]);
  registry.collect("kobun_watch_connection_budget", "The most watch streams that may be open at once.", "gauge", [], () => [[[], budget.state.limit]]);
}

/** kobun_frozen{scope}: 1 while the toggle of that scope (the operator, or a namespace) is frozen; gone with its life. */
export function frozenMetric(registry: MetricsRegistry): (scope: string, toggle: Toggle, life: AbortSignal) => void {
  const toggles = new Map<string, Toggle>();
  registry.collect("kobun_frozen", "1 while this scope's handling is frozen (a peer, a manual freeze, a lost lease).", "gauge", ["scope"], () =>
    [...toggles].map(([scope, toggle]) => [[scope], toggle.frozen ? 1 : 0] as [string[], number]),
  );
  return (scope, toggle, life) => {
    toggles.set(scope, toggle);
    life.addEventListener("abort", () => toggles.get(scope) === toggle && toggles.delete(scope), { once: true });
  };
}

/** controller-runtime's buckets for controller_runtime_reconcile_time_seconds. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4,
  4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
const HANDLER_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * controller_runtime_reconcile_* / _active_workers / _max_concurrent_reconciles of one
 * resource (`controller` = its plural.group, as the issue names it), and kobun's handler runs.
 */
export function reconcileMetrics(registry: MetricsRegistry, controller: string, maxConcurrent: number): ReconcileObserver {
  const total = registry.counter("controller_runtime_reconcile_total", "Total number of reconciliations per controller", ["controller", "result"]);
  const errors = registry.counter("controller_runtime_reconcile_errors_total", "Total number of reconciliation errors per controller", ["controller"]).labels(controller);
  const time = registry.histogram("controller_runtime_reconcile_time_seconds", "Length of time per reconciliation per controller", RECONCILE_BUCKETS, ["controller"]).labels(controller);
  const active = registry.gauge("controller_runtime_active_workers", "Number of currently used workers per controller", ["controller"]).labels(controller);
  registry.gauge("controller_runtime_max_concurrent_reconciles", "Maximum number of concurrent reconciles per controller", ["controller"]).set([controller], maxConcurrent);
  const runs = registry.counter("kobun_handler_runs_total", "Handler runs, by handler id, cause and outcome (success, retry, failure).", ["controller", "handler", "cause", "outcome"]);
  const duration = registry.histogram("kobun_handler_duration_seconds", "How long a handler ran, by handler id.", HANDLER_BUCKETS, ["controller", "handler"]);
  const results: Record<string, Series> = {};
  active.set(0);
  return {
    began: () => active.inc(),
    reconciled(result: ReconcileResult, seconds) {
      active.inc(-1);
      (results[result] ??= total.labels(controller, result)).inc();
      if (result === "error") errors.inc();
      time.observe(seconds);
    },
    handlerRan(handler, cause, outcome, seconds) {
      runs.labels(controller, handler, cause, outcome).inc();
      duration.labels(controller, handler).observe(seconds);
    },
  };
}
