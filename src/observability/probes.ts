// The probe server: GET /healthz (200 healthy, 503 with the problems otherwise) and
// GET /metrics (Prometheus text). Started only when `probes.liveness` is configured.

import type { Health } from "./health.ts";

export interface ProbeServer {
  url: string;
  stop(): Promise<void>;
}

export function startProbeServer(address: string, health: Health): ProbeServer {
  const url = new URL(address);
  const healthPath = url.pathname && url.pathname !== "/" ? url.pathname : "/healthz";
  const server = Bun.serve({
    hostname: url.hostname,
    port: Number(url.port || 8080),
    fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === healthPath || path === "/healthz") {
        const report = health.report();
        return Response.json(report, { status: report.healthy ? 200 : 503 });
      }
      if (path === "/metrics") {
        return new Response(health.metrics(), { headers: { "content-type": "text/plain; version=0.0.4" } });
      }
      return new Response("not found\n", { status: 404 });
    },
  });
  return {
    url: `http://${server.hostname}:${server.port}${healthPath}`,
    stop: () => server.stop(true),
  };
}
