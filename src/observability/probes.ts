// The probe server: GET /healthz (200 healthy, 503 with the problems otherwise), GET /readyz
// (200 once every stream listed and processed, 503 with what it waits for) and GET /metrics
// (Prometheus text, or OpenMetrics when the scraper's Accept asks for it).
// Started when `probes.liveness` is configured; `metrics:` may give /metrics a listener of
// its own (a port that a Service or PodMonitor selects, apart from the kubelet's probes).

import type { Health } from "./health.ts";
import { monitorEventLoop } from "./process.ts";
import { OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE, wantsOpenMetrics } from "./metrics.ts";

export interface ProbeServer {
  url: string;
  stop(): Promise<void>;
}

/** How long /healthz keeps reporting a blocked event loop after it ran again: a probe period or three. */
const BLOCKED_REPORTED_MS = 30_000;

export const EVENT_LOOP_COMPONENT = "event loop";

/** `eventLoopLimitS`: a loop blocked this long at once fails /healthz for a while (settings' probes.eventLoopLimit). */
export function startProbeServer(address: string, health: Health, options: { eventLoopLimitS: number }): ProbeServer {
  const url = new URL(address);
  const healthPath = url.pathname && url.pathname !== "/" ? url.pathname : "/healthz";
  // The lag is measured while someone can read it: for the life of this server.
  const life = new AbortController();
  const limit = options.eventLoopLimitS;
  const loop = health.component(EVENT_LOOP_COMPONENT, life.signal);
  let blockedUntil = 0;
  monitorEventLoop(health.metrics, life.signal, (late) => {
    const now = Date.now();
    if (late >= limit) {
      blockedUntil = now + BLOCKED_REPORTED_MS;
      const at = new Date(now).toISOString();
      const seconds = late.toFixed(1);
      loop.fail(`blocked for ${seconds} s at once at ${at} (limit ${limit} s): a handler runs synchronous work`);
    } else if (blockedUntil && now > blockedUntil) {
      blockedUntil = 0;
      loop.clear();
    }
  });
  const server = Bun.serve({
    hostname: url.hostname,
    port: Number(url.port || 8080),
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === healthPath || path === "/healthz") {
        const report = health.report();
        const probes = health.probes ? await health.probes() : undefined;
        return Response.json(probes ? { ...report, probes } : report, { status: report.healthy ? 200 : 503 });
      }
      if (path === "/readyz") {
        const report = health.readiness.report();
        return Response.json(report, { status: report.ready ? 200 : 503 });
      }
      if (path === "/metrics") return metricsResponse(request, health);
      return new Response("not found\n", { status: 404 });
    },
  });
  return {
    url: `http://${server.hostname}:${server.port}${healthPath}`,
    stop: () => {
      life.abort();
      return server.stop(true);
    },
  };
}

/** `/metrics` alone at `address` (`http://host:port`, path ignored but for /metrics). */
export function startMetricsServer(address: string, health: Health): ProbeServer {
  const url = new URL(address);
  const server = Bun.serve({
    hostname: url.hostname,
    port: Number(url.port || 8080),
    fetch(request) {
      if (new URL(request.url).pathname === "/metrics") return metricsResponse(request, health);
      return new Response("not found: metrics are at /metrics\n", { status: 404 });
    },
  });
  return { url: `http://${server.hostname}:${server.port}/metrics`, stop: () => server.stop(true) };
}

function metricsResponse(request: Request, health: Health): Response {
  const openMetrics = wantsOpenMetrics(request.headers.get("accept"));
  return new Response(health.exposition(openMetrics), {
    headers: { "content-type": openMetrics ? OPENMETRICS_CONTENT_TYPE : TEXT_CONTENT_TYPE },
  });
}
