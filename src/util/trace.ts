// Tracing as the rooms see it: a small span interface, one process-wide tracer (none unless
// the runtime installs one: tracing is off by default), and the span active in the current
// async context, so that a handling cycle's handlers, its PATCH and its log lines find their
// parent without being handed it. observability/otel.ts implements the tracer over the
// OpenTelemetry SDK; it is loaded only when tracing is on, so nothing here costs anything
// while it is off (every entry point checks `tracer` first).
//
// Span attributes must never carry Secret data, tokens or an object's content: resource,
// namespace, name, uid, cause, handler ids, outcomes, HTTP method, path and status only.

import type { AsyncLocalStorage } from "node:async_hooks";

/** OTEL_TRACES_SAMPLER's values (the OpenTelemetry SDK configuration's names). */
export const SAMPLERS = [
  "always_on", "always_off", "traceidratio",
  "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio",
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

export type SpanAttributes = Record<string, string | number | boolean | string[]>;

export interface Span {
  /**
   * 32 hex digits, as in W3C traceparent and the log lines' trace_id; undefined when the sampler
   * left the trace out (nothing is exported: a log line's id would lead nowhere).
   */
  readonly traceId: string | undefined;
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed. No message: a handler's error text may carry what a trace must not. */
  fail(): void;
  end(): void;
}

export interface Tracer {
  /**
   * A new span, the child of `parent` (a root span when undefined); `client`: a call to another
   * service (an API request), OpenTelemetry's CLIENT kind, which service graphs read.
   */
  startSpan(name: string, attributes: SpanAttributes, parent: Span | undefined, client?: boolean): Span;
}

let tracer: Tracer | undefined;
let active: AsyncLocalStorage<Span> | undefined;

/** Installs the process's tracer (undefined: tracing off). The runtime does, for the length of a run. */
export function useTracer(next: Tracer | undefined): void {
  // Required on first use, not imported: a bundle hoists static imports of builtins to its start,
  // and an operator with tracing off must not load node:async_hooks at all.
  if (next) active ??= new (require("node:async_hooks") as typeof import("node:async_hooks")).AsyncLocalStorage<Span>();
  tracer = next;
}

/** True while a tracer is installed: callers keep their untraced path as it is otherwise. */
export function tracing(): boolean {
  return tracer !== undefined;
}

/** The span of the current async context (a cycle, a handler), if tracing is on. */
export function activeSpan(): Span | undefined {
  return tracer === undefined ? undefined : active!.getStore();
}

/**
 * Runs `fn` inside a new span, the child of the active one; `root`: start a trace of its own
 * when there is no active span (a handling cycle), else only a child is made (a request made
 * outside any cycle is not traced). The span ends when `fn` settles; a rejection fails it.
 */
export async function inSpan<T>(
  name: string, attributes: SpanAttributes, root: boolean, fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const parent = activeSpan();
  if (tracer === undefined || (!parent && !root)) return fn(undefined);
  const span = tracer.startSpan(name, attributes, parent);
  try {
    return await active!.run(span, () => fn(span));
  } catch (error) {
    span.fail();
    throw error;
  } finally {
    span.end();
  }
}

/** A child of the active span for a request timed by its caller (one HTTP attempt, a CLIENT span), or undefined. */
export function childSpan(name: string, attributes: SpanAttributes): Span | undefined {
  const parent = activeSpan();
  return parent && tracer ? tracer.startSpan(name, attributes, parent, true) : undefined;
}
