// observability/: what the operator tells about itself: health and readiness (health.ts), the
// metrics registry and its families, the probe and metrics servers (probes.ts), the process
// figures, and the OpenTelemetry tracer (otel.ts: loaded only when tracing is on, so it is
// imported lazily by path and never re-exported here).
// Must never import a room above util/: the rooms above feed it, never the other way round.
export { Health } from "./health.ts";
export { type HistogramSeries, type MetricsRegistry, type Series } from "./metrics.ts";
export { startMetricsServer, startProbeServer, type ProbeServer } from "./probes.ts";
