// Tracing of one API request attempt: kept apart from the transport's retry loop.
import { childSpan, tracing, type Span } from "../util/index.ts";

/** Inside a traced cycle: one span per attempt. Method, path and status only (no headers, no body). */
export function attemptSpan(method: string, path: string, host: string): Span | undefined {
  if (!tracing()) return undefined; // no attributes object per request while tracing is off
  return childSpan(method, { "http.request.method": method, "url.path": path, "server.address": host });
}

/** An attempt's span ends with its status code; none (no answer) or >= 400 fails it. */
export function endSpan(span: Span, status: number | undefined): void {
  if (status !== undefined) span.setAttributes({ "http.response.status_code": status });
  if (status === undefined || status >= 400) span.fail();
  span.end();
}
