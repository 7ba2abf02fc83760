// The operator's HTTP listeners: the probes (/healthz, /readyz, /metrics) at probes.liveness,
// and /metrics alone at metrics.address. Each is started before the operator's tasks, so a bad
// or taken address fails run() at once (exit 5) rather than leaving an operator nobody can probe.

import { metricsUrl, type Settings } from "../config/index.ts";
import type { Health } from "../observability/index.ts";
import { startMetricsServer, startProbeServer, type ProbeServer } from "../observability/index.ts";
import { aborted } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import type { TaskScope } from "../util/index.ts";
import { FatalError } from "./exits.ts";

/** Starts what `settings` asks for, each stopped when `scope` closes; returns the probe URL, if any. */
export async function serveProbes(
  settings: Settings, health: Health, scope: TaskScope, logger: Logger,
): Promise<string | undefined> {
  const wanted: Array<{ what: string; address: string; start(): ProbeServer }> = [];
  const liveness = settings.probes.liveness;
  const eventLoopLimitS = settings.probes.eventLoopLimit;
  if (liveness) {
    const start = () => startProbeServer(liveness, health, { eventLoopLimitS });
    wanted.push({ what: "probes", address: liveness, start });
  }
  const metrics = settings.metrics.address;
  if (metrics) {
    wanted.push({ what: "metrics", address: metrics, start: () => startMetricsServer(metricsUrl(metrics), health) });
  }
  let probeUrl: string | undefined;
  for (const { what, address, start } of wanted) {
    let server: ProbeServer;
    try {
      server = start();
    } catch (error) {
      await scope.close(0);
      const why = (error as Error).message;
      throw new FatalError("fatal", `cannot serve ${what} at ${address}: ${why}`, { cause: error });
    }
    if (what === "probes") probeUrl = server.url;
    logger.info(`serving ${what}`, { url: server.url });
    scope.spawn(what, async (s) => {
      await aborted(s);
      await server.stop();
    });
  }
  return probeUrl;
}
