// A real Jaeger (built by test/jaeger/build.sh from Go modules): in-memory storage, the OTLP
// HTTP receiver and the query HTTP API, each on a free loopback port, in a temp dir; its traces
// read back over the query API (/api/traces, the one Jaeger's UI uses).

import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./operator.ts";
import { freePort } from "./prometheus.ts";
import { startService } from "./service.ts";

/** Where build.sh puts the binary: ${KOBUN_JAEGER_CACHE:-~/.cache/kobun/jaeger}/<VERSION>/jaeger. */
export function jaegerBinary(): string {
  const version = readFileSync(join(ROOT, "test/jaeger/VERSION"), "utf8").trim();
  return join(process.env.KOBUN_JAEGER_CACHE ?? join(homedir(), ".cache/kobun/jaeger"), version, "jaeger");
}

export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: string; spanID: string }[];
  tags: { key: string; value: unknown }[];
  /** What Jaeger found wrong with the span (e.g. a child outlasting its parent: "clock skew"). */
  warnings?: string[] | null;
  /** Its resource: service name and attributes (filled in by traces()). */
  process: { serviceName: string; tags: { key: string; value: unknown }[] };
}

export interface Jaeger {
  /** The OTLP/HTTP base URL (an operator's OTEL_EXPORTER_OTLP_ENDPOINT). */
  otlpEndpoint: string;
  /** Every trace of `service` Jaeger stores, each as its spans. */
  traces(service: string): Promise<JaegerSpan[][]>;
  stop(): Promise<void>;
}

function config(otlp: number, query: number, queryGrpc: number, health: number): string {
  return `
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces: { receivers: [otlp], processors: [], exporters: [jaeger_storage_exporter] }
  telemetry:
    metrics: { level: none }
    logs: { level: warn }
extensions:
  healthcheckv2: { use_v2: true, http: { endpoint: "127.0.0.1:${health}" } }
  jaeger_query:
    storage: { traces: memstore }
    http: { endpoint: "127.0.0.1:${query}" }
    grpc: { endpoint: "127.0.0.1:${queryGrpc}" }
  jaeger_storage:
    backends:
      memstore: { memory: { max_traces: 10000 } }
receivers:
  otlp:
    protocols:
      http: { endpoint: "127.0.0.1:${otlp}" }
exporters:
  jaeger_storage_exporter: { trace_storage: memstore }
`;
}

/** Starts Jaeger; resolves once its query API answers. */
export async function startJaeger(): Promise<Jaeger> {
  const binary = jaegerBinary();
  if (!existsSync(binary)) throw new Error(`no Jaeger at ${binary}: run test/jaeger/build.sh (npm run test:e2e does)`);
  const dir = mkdtempSync(join(tmpdir(), "kobun-e2e-jaeger-"));
  const [otlp, query, queryGrpc, health] = [await freePort(), await freePort(), await freePort(), await freePort()];
  writeFileSync(join(dir, "jaeger.yaml"), config(otlp, query, queryGrpc, health));
  const queryUrl = `http://127.0.0.1:${query}`;
  const { stop } = await startService("Jaeger", [binary, "--config", join(dir, "jaeger.yaml")], dir, queryUrl, async () => {
    const ready = await fetch(`${queryUrl}/api/services`).then((r) => r.ok, () => false);
    return ready && (await fetch(`http://127.0.0.1:${otlp}/v1/traces`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }).then((r) => r.ok, () => false));
  });
  return {
    otlpEndpoint: `http://127.0.0.1:${otlp}`,
    async traces(service) {
      const response = await fetch(`${queryUrl}/api/traces?service=${encodeURIComponent(service)}&limit=100&lookback=1h`);
      if (response.status === 404) return [];
      type Trace = { spans: (JaegerSpan & { processID: string })[]; processes: Record<string, JaegerSpan["process"]> };
      const body = (await response.json()) as { data?: Trace[]; errors?: unknown };
      if (!response.ok) throw new Error(`Jaeger /api/traces: ${response.status} ${JSON.stringify(body.errors)}`);
      return (body.data ?? []).map((t) => t.spans.map((s) => ({ ...s, process: t.processes[s.processID]! })));
    },
    stop,
  };
}
