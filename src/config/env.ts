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
      const where = { flag: variable, path: `tracing.${key}`, expected: result.expected };
      issues.push(configIssue(where, `expected ${result.expected}, got ${describeValue(raw)}`));
    }
  }
  // The SDK's switch: everything else may stay configured, nothing is traced.
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true";
  if (disabled || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") tracing.endpoint = null;
}
