// Tracing of one API request attempt: kept apart from the transport's retry loop.
import { childSpan, tracing, type Span, type SpanAttributes } from "../util/index.ts";

/**
 * Inside a traced cycle: one span per attempt. Method, path and status only (no headers, no body).
 * `host` is the URL's host:port; OpenTelemetry's server.address is the host alone, the port apart.
 */
export function attemptSpan(method: string, path: string, host: string): Span | undefined {
  if (!tracing()) return undefined; // no attributes object per request while tracing is off
  const colon = host.lastIndexOf(":");
  const hasPort = colon > host.lastIndexOf("]"); // "[::1]:6443" has one, "[::1]" none
  const attributes: SpanAttributes = {
    "http.request.method": method, "url.path": path, "server.address": hasPort ? host.slice(0, colon) : host,
  };
  if (hasPort) attributes["server.port"] = Number(host.slice(colon + 1));
  return childSpan(method, attributes);
}

/** An attempt's span ends with its status code; none (no answer) or >= 400 fails it. */
export function endSpan(span: Span, status: number | undefined): void {
  if (status !== undefined) span.setAttributes({ "http.response.status_code": status });
  if (status === undefined || status >= 400) span.fail();
  span.end();
}
