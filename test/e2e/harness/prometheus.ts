// A real Prometheus (built by test/prometheus/build.sh from Go modules) scraping given
// targets every second, in a temp dir, on a free loopback port; queried over its HTTP API.

import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./operator.ts";
import { startService } from "./service.ts";

/** Where build.sh puts the binary: ${KOBUN_PROMETHEUS_CACHE:-~/.cache/kobun/prometheus}/<VERSION>/prometheus. */
export function prometheusBinary(): string {
  const version = readFileSync(join(ROOT, "test/prometheus/VERSION"), "utf8").trim();
  return join(process.env.KOBUN_PROMETHEUS_CACHE ?? join(homedir(), ".cache/kobun/prometheus"), version, "prometheus");
}

export interface Prometheus {
  url: string;
  /** An instant PromQL query: the result vector as (labels, value) pairs. */
  query(promql: string): Promise<Array<{ metric: Record<string, string>; value: number }>>;
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 now (a child process binds it next). */
export async function freePort(): Promise<number> {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/** Starts Prometheus scraping `targets` (host:port, path /metrics) as job "kobun"; resolves once it answers. */
export async function startPrometheus(targets: string[]): Promise<Prometheus> {
  const binary = prometheusBinary();
  if (!existsSync(binary)) throw new Error(`no Prometheus at ${binary}: run test/prometheus/build.sh (npm run test:e2e does)`);
  const dir = mkdtempSync(join(tmpdir(), "kobun-e2e-prometheus-"));
  const config = [
    "global: { scrape_interval: 1s, evaluation_interval: 1s }",
    "scrape_configs:",
    "  - job_name: kobun",
    `    static_configs: [{ targets: [${targets.map((t) => JSON.stringify(t)).join(", ")}] }]`,
  ].join("\n");
  writeFileSync(join(dir, "prometheus.yml"), config + "\n");
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const argv = [binary, `--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`];
  const { stop } = await startService("Prometheus", argv, dir, url, () => fetch(`${url}/-/ready`).then((r) => r.ok, () => false));
  return {
    url,
    async query(promql) {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await response.json()) as { status: string; error?: string; data?: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
      if (body.status !== "success") throw new Error(`PromQL ${promql}: ${body.error ?? response.status}`);
      return body.data!.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    stop,
  };
}
