// util/: the floor every room stands on: the task scope (scope.ts) and the supervision loop
// (supervise.ts), abortable waits (abort.ts), backoff, the freeze toggle, structured logging and
// its repeat filter, redaction, the compact table for per-object state, the tracing
// interface (the tracer itself is observability/'s, installed by runtime/), and the clock of
// handler time (clock.ts: the machine's, or a virtual one a test kit installs).
// Must never import another room, nor know what a Kubernetes object, a request or a setting is.
export {
  aborted, eitherSignal, isAbortError, linkedSignal, longTimeout, onAbort, settledSignal, sleep, untilAborted,
} from "./abort.ts";
export { Backoff, backoffDelay } from "./backoff.ts";
export { closestMatch } from "./closest.ts";
export { clock, realClock, useClock, type CancelTimer, type Clock } from "./clock.ts";
export { CompactMap } from "./compact-map.ts";
export { withoutRepeats } from "./log-repeats.ts";
export {
  formatLine, Logger, memorySink, silentLogger, stderrSink, teeSink, type LogFields, type LogFormat, type LogLevel,
  type LogSink, type MemorySink, type MemorySinkOptions,
} from "./log.ts";
export { Nudge } from "./nudge.ts";
export { parserComplaint, withoutCredentials } from "./redact.ts";
export { TaskScope, type TaskReport } from "./scope.ts";
export { supervise } from "./supervise.ts";
export { Toggle } from "./toggle.ts";
export { VirtualClock } from "./virtual-clock.ts";
export {
  SAMPLERS, activeSpan, childSpan, inSpan, tracing, useTracer,
  type SamplerName, type Span, type SpanAttributes, type Tracer,
} from "./trace.ts";
