// Tracing for the length of a run: when the settings name an OTLP endpoint, the OpenTelemetry
// SDK is imported (dynamically: with tracing off it is never evaluated) and installed as the
// process's tracer (util/trace.ts); at the end, what is batched is sent, bounded, and the
// tracer is removed.

import type { Settings } from "../config/index.ts";
import type { Logger } from "../util/index.ts";
import { useTracer } from "../util/index.ts";

/** How long the last spans may take to be sent at shutdown. */
const FLUSH_MS = 2000;

/** Starts tracing if configured; the returned call stops it (undefined: tracing is off). */
export async function startTracing(settings: Settings, logger: Logger): Promise<(() => Promise<void>) | undefined> {
  const { endpoint, serviceName, sampler, samplerArg } = settings.tracing;
  if (endpoint === null) return undefined;
  const { startOtel } = await import("../observability/otel.ts");
  const otel = startOtel({ endpoint, serviceName, sampler, samplerArg });
  useTracer(otel.tracer);
  // The origin only: a URL's user info or query is not for the log.
  logger.info("tracing on", { endpoint: new URL(endpoint).origin, service: serviceName, sampler });
  return async () => {
    useTracer(undefined);
    await otel.shutdown(FLUSH_MS);
  };
}
