// The exposition that a real Prometheus parses: text 0.0.4 by default, OpenMetrics when the
// scraper's Accept asks for it, both served over HTTP by the probe and metrics listeners.

import { afterEach, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Health } from "../../src/observability/health.ts";
import { MetricsRegistry, OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE } from "../../src/observability/metrics.ts";
import { startMetricsServer, startProbeServer, type ProbeServer } from "../../src/observability/probes.ts";

let servers: ProbeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  servers = [];
});

test("counters, gauges and histograms with labels are exposed in the text format with HELP and TYPE", () => {
  const registry = new MetricsRegistry();
  const requests = registry.counter("rest_client_requests_total", "Requests.", ["code", "method"]);
  requests.labels("200", "GET").inc();
  requests.labels("200", "GET").inc(2);
  requests.labels("<error>", "PATCH").inc();
  registry.gauge("kobun_lease_held", "Lease held.").set([], 1);
  const h = registry.histogram("kobun_handler_duration_seconds", "Handler time.", [0.1, 1], ["handler"]);
  h.observe(["create_fn"], 0.05);
  h.observe(["create_fn"], 0.5);
  h.observe(["create_fn"], 7);
  expect(registry.expose()).toBe([
    "# HELP kobun_handler_duration_seconds Handler time.",
    "# TYPE kobun_handler_duration_seconds histogram",
    'kobun_handler_duration_seconds_bucket{handler="create_fn",le="0.1"} 1',
    'kobun_handler_duration_seconds_bucket{handler="create_fn",le="1"} 2',
    'kobun_handler_duration_seconds_bucket{handler="create_fn",le="+Inf"} 3',
    'kobun_handler_duration_seconds_sum{handler="create_fn"} 7.55',
    'kobun_handler_duration_seconds_count{handler="create_fn"} 3',
    "# HELP kobun_lease_held Lease held.",
    "# TYPE kobun_lease_held gauge",
    "kobun_lease_held 1",
    "# HELP rest_client_requests_total Requests.",
    "# TYPE rest_client_requests_total counter",
    'rest_client_requests_total{code="200",method="GET"} 3',
    'rest_client_requests_total{code="<error>",method="PATCH"} 1',
    "",
  ].join("\n"));
});

test("label values are told apart exactly: two series whose values would join into the same text stay two series", () => {
  const registry = new MetricsRegistry();
  const pairs = registry.counter("pairs_total", "Pairs.", ["a", "b"]);
  pairs.labels("x\u0000y", "z").inc();
  pairs.labels("x", "y\u0000z").inc(5);
  expect(pairs.labels("x\u0000y", "z").value).toBe(1);
  expect(pairs.labels("x", "y\u0000z").value).toBe(5);
  expect(registry.expose().split("\n").filter((line) => line.startsWith("pairs_total{"))).toHaveLength(2);
});

test("OpenMetrics names a counter's family without _total and ends with # EOF", () => {
  const registry = new MetricsRegistry();
  registry.counter("kobun_watch_events_total", "Events.", ["type"]).labels("ADDED").inc();
  const text = registry.expose(true);
  expect(text).toContain("# TYPE kobun_watch_events counter\n");
  expect(text).toContain('kobun_watch_events_total{type="ADDED"} 1\n');
  expect(text.endsWith("# EOF\n")).toBe(true);
});

test("bucket bounds are written as client_golang writes them: Go's %g, and a whole number with .0 in OpenMetrics", () => {
  const registry = new MetricsRegistry();
  // workqueue_*'s buckets (controller-runtime's), and the rest of Go's %g cases.
  const bounds = [1e-8, 1e-6, 1e-5, 1e-4, 0.25, 1, 1000, 1e6, 1234567.5];
  registry.histogram("h_seconds", "H.", bounds).labels().observe(0);
  const les = (text: string) => [...text.matchAll(/le="([^"]+)"/g)].map((m) => m[1]);
  expect(les(registry.expose())).toEqual(
    ["1e-08", "1e-06", "1e-05", "0.0001", "0.25", "1", "1000", "1e+06", "1.2345675e+06", "+Inf"],
  );
  expect(les(registry.expose(true))).toEqual(
    ["1e-08", "1e-06", "1e-05", "0.0001", "0.25", "1.0", "1000.0", "1e+06", "1.2345675e+06", "+Inf"],
  );
});

test("label values are escaped; bad names, label counts and counter misuse are refused with the metric's name", () => {
  const registry = new MetricsRegistry();
  registry.counter("x_total", "X.", ["why"]).labels('a "quoted"\\ line\nbreak').inc();
  expect(registry.expose()).toContain('x_total{why="a \\"quoted\\"\\\\ line\\nbreak"} 1');
  expect(() => registry.counter("bad-name_total", "")).toThrow('"bad-name_total" is not a Prometheus name');
  expect(() => registry.counter("no_suffix", "")).toThrow("counter no_suffix must end in _total");
  expect(() => registry.counter("x_total", "X.", ["code"])).toThrow("already registered as a counter with labels (why)");
  expect(() => registry.counter("x_total", "X.", ["why"]).labels()).toThrow("x_total takes 1 label values (why), got 0");
  expect(() => registry.counter("x_total", "X.", ["why"]).labels("a").inc(-1)).toThrow("a counter only goes up");
  expect(() => registry.histogram("h", "H.", [1, 0.5])).toThrow("buckets must be finite and increasing");
});

test("the probe listener serves /metrics with process figures, negotiating OpenMetrics on Accept", async () => {
  const health = new Health();
  health.metrics.counter("kobun_handler_runs_total", "Handler runs.", ["outcome"]).labels("success").inc();
  const probes = startProbeServer("http://127.0.0.1:0", health, { eventLoopLimitS: resolveSettings().probes.eventLoopLimit });
  servers.push(probes);
  const metricsUrl = probes.url.replace(/\/healthz$/, "/metrics");
  const plain = await fetch(metricsUrl);
  expect(plain.headers.get("content-type")).toBe(TEXT_CONTENT_TYPE);
  const text = await plain.text();
  expect(text).toContain('kobun_handler_runs_total{outcome="success"} 1\n');
  expect(text).toContain("kobun_healthy 1\n");
  expect(Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1])).toBeGreaterThan(1_000_000);
  expect(Number(/^process_open_fds (\S+)$/m.exec(text)?.[1])).toBeGreaterThan(2);
  const start = Number(/^process_start_time_seconds (\S+)$/m.exec(text)?.[1]);
  expect(Math.abs(start - (Date.now() / 1000 - process.uptime()))).toBeLessThan(5);
  expect(text).toContain("# TYPE kobun_event_loop_lag_seconds histogram\n");

  // What Prometheus sends by default: OpenMetrics first, the text format as a fallback.
  const om = await fetch(metricsUrl, { headers: { accept: "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.1" } });
  expect(om.headers.get("content-type")).toBe(OPENMETRICS_CONTENT_TYPE);
  expect((await om.text()).endsWith("# EOF\n")).toBe(true);
});

test("a metrics address of its own serves /metrics and nothing else", async () => {
  const health = new Health();
  health.metrics.counter("kobun_processing_failures_total", "Failed writes.").inc();
  const server = startMetricsServer("http://127.0.0.1:0", health);
  servers.push(server);
  expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  expect(await (await fetch(server.url)).text()).toContain("kobun_processing_failures_total 1\n");
  expect((await fetch(server.url.replace("/metrics", "/healthz"))).status).toBe(404);
});
