// The tracer of util/trace.ts over the OpenTelemetry JS SDK: spans batched and sent as OTLP
// over HTTP (JSON) to `<endpoint>/v1/traces`. The runtime imports this module dynamically,
// only when tracing is on: with tracing off, the SDK is never evaluated (no start-up or
// memory cost; see the README's "Running in production" for the figures).
//
// The SDK is taken with require(), not import: the bundler then picks the packages' CommonJS
// builds, whose own require()s of node:zlib, node:stream and node:util run only when this
// code does. Their ESM builds' static imports of those would be hoisted to the top of the
// compiled binary and loaded at every start, tracing or not (≈ 3 MB of idle RSS, issue 15).
//
// Parents are passed explicitly (util/trace.ts keeps the active span), so no OpenTelemetry
// context manager is installed and nothing global of the SDK is touched.

import type * as Api from "@opentelemetry/api";
import type * as Exporter from "@opentelemetry/exporter-trace-otlp-http";
import type * as Resources from "@opentelemetry/resources";
import type * as Sdk from "@opentelemetry/sdk-trace";
import type { SamplerName, Span, SpanAttributes, Tracer } from "../util/index.ts";

export interface OtelOptions {
  /** The OTLP/HTTP base URL; spans go to `<endpoint>/v1/traces`. */
  endpoint: string;
  serviceName: string;
  /** OTEL_TRACES_SAMPLER's names. */
  sampler: SamplerName;
  /** The ratio of the traceidratio samplers, 0 to 1. */
  samplerArg: number;
  serviceVersion?: string;
}

export interface OtelTracer {
  tracer: Tracer;
  /** Sends what is batched and stops, bounded by `timeoutMs` (spans not sent by then are dropped). */
  shutdown(timeoutMs: number): Promise<void>;
}

class WrappedSpan implements Span {
  readonly traceId: string | undefined;
  /**
   * @param anchor epoch ms minus performance.now(), fixed by the trace's root: every span of a
   * trace reads one clock, so a child never seems to outlast its parent (the SDK starts a span at
   * Date.now(), whole milliseconds: a PATCH ending with its cycle came out up to 1 ms past it,
   * and Jaeger flagged it as clock skew).
   */
  constructor(readonly span: Api.Span, private readonly api: typeof Api, readonly anchor: number) {
    const { traceId, traceFlags } = span.spanContext();
    this.traceId = traceFlags & api.TraceFlags.SAMPLED ? traceId : undefined;
  }
  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(attributes);
  }
  fail(): void {
    this.span.setStatus({ code: this.api.SpanStatusCode.ERROR });
  }
  end(): void {
    this.span.end(this.anchor + performance.now());
  }
}

export function startOtel(options: OtelOptions): OtelTracer {
  const api = require("@opentelemetry/api") as typeof Api;
  const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-http") as typeof Exporter;
  const { defaultResource, detectResources, envDetector, resourceFromAttributes } =
    require("@opentelemetry/resources") as typeof Resources;
  const sdk = require("@opentelemetry/sdk-trace") as typeof Sdk;
  const { context, ROOT_CONTEXT, trace } = api;
  const url = `${options.endpoint.replace(/\/+$/, "")}/v1/traces`;
  const provider = new sdk.TracerProvider({
    // The SDK's own (telemetry.sdk.*), then OTEL_RESOURCE_ATTRIBUTES (a replica's pod, as every SDK
    // reads it), then ours: the service name of the settings wins.
    resource: defaultResource().merge(detectResources({ detectors: [envDetector] })).merge(resourceFromAttributes({
      "service.name": options.serviceName,
      ...(options.serviceVersion ? { "service.version": options.serviceVersion } : {}),
    })),
    sampler: samplerOf(sdk, options.sampler, options.samplerArg),
    // A burst (a relist of thousands of objects: 3 spans each within a second) must not overflow
    // the SDK's default queue of 2,048 spans, which drops the rest; 8,192 bounds it at a few MB.
    spanProcessors: [
      new sdk.BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url }),
        scheduledDelayMillis: 1000, maxQueueSize: 8192, maxExportBatchSize: 1024,
      }),
    ],
  });
  const otel = provider.getTracer("kobun");
  const tracer: Tracer = {
    startSpan(name, attributes, parent, client) {
      const wrapped = parent instanceof WrappedSpan ? parent : undefined;
      const ctx = wrapped ? trace.setSpan(context.active(), wrapped.span) : ROOT_CONTEXT;
      const anchor = wrapped?.anchor ?? Date.now() - performance.now();
      const kind = client ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL;
      const startTime = anchor + performance.now();
      return new WrappedSpan(otel.startSpan(name, { attributes, kind, startTime }, ctx), api, anchor);
    },
  };
  return {
    tracer,
    async shutdown(timeoutMs) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      try {
        await Promise.race([provider.shutdown().catch(() => {}), late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function samplerOf(sdk: typeof Sdk, name: SamplerName, ratio: number): Sdk.Sampler {
  const { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler } = sdk;
  switch (name) {
    case "always_on": return new AlwaysOnSampler();
    case "always_off": return new AlwaysOffSampler();
    case "traceidratio": return new TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_on": return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case "parentbased_always_off": return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio": return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}
