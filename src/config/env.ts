// The OpenTelemetry SDK's standard environment variables, over kobun.yaml's `tracing:` block
// (and under flags, of which tracing has none): a Deployment points an operator at its
// cluster's collector the way it would any instrumented program. Validated like the file's
// values; a bad one is named by its variable.

import { configIssue, describeValue, type ConfigIssue } from "./errors.ts";
import type { Field, Section, Node } from "./fields.ts";
import { SETTINGS_SCHEMA } from "./schema.ts";

type Tree = Record<string, unknown>;

/** Variable → the tracing field it sets; numbers are parsed first. */
const TRACING_VARIABLES: ReadonlyArray<readonly [string, string, "text" | "number"]> = [
  ["OTEL_EXPORTER_OTLP_ENDPOINT", "endpoint", "text"],
  ["OTEL_SERVICE_NAME", "serviceName", "text"],
  ["OTEL_TRACES_SAMPLER", "sampler", "text"],
  ["OTEL_TRACES_SAMPLER_ARG", "samplerArg", "number"],
];

export function applyEnv(values: Tree, env: Readonly<Record<string, string | undefined>>, issues: ConfigIssue[]): void {
  const tracing = values.tracing as Tree;
  const fields = (SETTINGS_SCHEMA.fields.tracing as Section<Record<string, Node>>).fields;
  for (const [variable, key, type] of TRACING_VARIABLES) {
    const raw = env[variable];
    if (raw === undefined || raw === "") continue;
    const field = fields[key] as Field<unknown>;
    const value = type === "number" && raw.trim() !== "" && Number.isFinite(Number(raw)) ? Number(raw) : raw;
    const result = field.read(value);
    if (result.ok) {
      tracing[key] = result.value;
    } else {
      issues.push(variableIssue(variable, `tracing.${key}`, result.expected, raw));
    }
  }
  // The SDK's order for the service's name: OTEL_SERVICE_NAME, then OTEL_RESOURCE_ATTRIBUTES' service.name.
  const named = env.OTEL_SERVICE_NAME?.trim() ? undefined : resourceServiceName(env.OTEL_RESOURCE_ATTRIBUTES);
  if (named) tracing.serviceName = named;
  tracesEndpoint(tracing, fields.endpoint as Field<unknown>, env, issues);
  protocolHeard(env, issues);
  // The SDK's switch: everything else may stay configured, nothing is traced.
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true";
  if (disabled || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") tracing.endpoint = null;
}

const TRACES_PATH = "/v1/traces";

/**
 * The SDK's traces-only URL, which wins over OTEL_EXPORTER_OTLP_ENDPOINT: used as written, so it is taken when it
 * ends in /v1/traces (where kobun sends spans: the base URL is the rest); one that does not is named, not ignored.
 */
function tracesEndpoint(
  tracing: Tree, field: Field<unknown>, env: Readonly<Record<string, string | undefined>>, issues: ConfigIssue[],
): void {
  const raw = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (!raw) return;
  const base = raw.replace(/\/+$/, "");
  const read = base.endsWith(TRACES_PATH) ? field.read(base.slice(0, -TRACES_PATH.length)) : undefined;
  if (read?.ok) {
    tracing.endpoint = read.value;
    return;
  }
  const expected = `an http:// or https:// URL ending in ${TRACES_PATH}, like "http://otel-collector:4318${TRACES_PATH}"`;
  issues.push(variableIssue("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "tracing.endpoint", expected, raw));
}

/** kobun speaks OTLP over HTTP (a collector's port 4318 takes JSON and protobuf alike): gRPC is refused by name. */
function protocolHeard(env: Readonly<Record<string, string | undefined>>, issues: ConfigIssue[]): void {
  for (const variable of ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]) {
    const raw = env[variable]?.trim();
    if (!raw || raw === "http/json" || raw === "http/protobuf") continue;
    const expected = '"http/json" or "http/protobuf" (kobun sends OTLP over HTTP, to the collector\'s port 4318)';
    issues.push(variableIssue(variable, "tracing.endpoint", expected, raw));
  }
}

/** `service.name` of OTEL_RESOURCE_ATTRIBUTES ("k1=v1,k2=v2", values percent-encoded), if it has one. */
function resourceServiceName(attributes: string | undefined): string | undefined {
  for (const pair of attributes?.split(",") ?? []) {
    const at = pair.indexOf("=");
    if (at < 0 || pair.slice(0, at).trim() !== "service.name") continue;
    try {
      return decodeURIComponent(pair.slice(at + 1).trim()) || undefined;
    } catch {
      return undefined; // as the SDK, a value it cannot decode is left out
    }
  }
  return undefined;
}

/** A variable's value refused, named by the variable and the setting it stands for. */
function variableIssue(variable: string, path: string, expected: string, raw: string): ConfigIssue {
  return configIssue({ flag: variable, path, expected }, `expected ${expected}, got ${describeValue(raw)}`);
}
