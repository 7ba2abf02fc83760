// kobun.yaml's `tracing:` block and the OpenTelemetry SDK's variables over it: off by default,
// on with an endpoint from either, the environment winning, bad values named by where they came from.

import { expect, test } from "bun:test";
import { ConfigError, resolveSettings } from "../../src/config/index.ts";

test("tracing is off by default and on with an endpoint in kobun.yaml", () => {
  expect(resolveSettings({ fileData: {} }).tracing).toEqual({ endpoint: null, serviceName: "kobun", sampler: "parentbased_always_on", samplerArg: 1 });
  const on = resolveSettings({ fileData: { tracing: { endpoint: "http://collector:4318", serviceName: "shop-operator", sampler: "traceidratio", samplerArg: 0.25 } } });
  expect(on.tracing).toEqual({ endpoint: "http://collector:4318", serviceName: "shop-operator", sampler: "traceidratio", samplerArg: 0.25 });
});

test("OTEL_* variables turn tracing on and override the file; OTEL_SDK_DISABLED turns it off", () => {
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example:4318", OTEL_SERVICE_NAME: "from-env", OTEL_TRACES_SAMPLER: "always_on", OTEL_TRACES_SAMPLER_ARG: "0.5" };
  const s = resolveSettings({ fileData: { tracing: { endpoint: "http://file:4318", serviceName: "from-file" } }, env });
  expect(s.tracing).toEqual({ endpoint: "https://otel.example:4318", serviceName: "from-env", sampler: "always_on", samplerArg: 0.5 });
  expect(resolveSettings({ fileData: { tracing: { endpoint: "http://file:4318" } }, env: { OTEL_SDK_DISABLED: "true" } }).tracing.endpoint).toBeNull();
  // Without `env`, the process's variables are not read (the CLI passes them).
  expect(resolveSettings({ fileData: {} }).tracing.endpoint).toBeNull();
});

test("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, the traces URL itself, wins over the base URL; HTTP protocols are taken", () => {
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://base:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example:4318/v1/traces",
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
  };
  expect(resolveSettings({ fileData: {}, env }).tracing.endpoint).toBe("https://traces.example:4318");
  const behindPath = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://gateway/otel/v1/traces/" };
  expect(resolveSettings({ fileData: {}, env: behindPath }).tracing.endpoint).toBe("http://gateway/otel");
});

test("service.name in OTEL_RESOURCE_ATTRIBUTES names the service unless OTEL_SERVICE_NAME does, over the file", () => {
  const file = { tracing: { serviceName: "from-file" } };
  const attributes = "k8s.pod.name=shop-0,service.name=shop%20operator";
  expect(resolveSettings({ fileData: file, env: { OTEL_RESOURCE_ATTRIBUTES: attributes } }).tracing.serviceName).toBe("shop operator");
  const both = { OTEL_RESOURCE_ATTRIBUTES: attributes, OTEL_SERVICE_NAME: "named" };
  expect(resolveSettings({ fileData: file, env: both }).tracing.serviceName).toBe("named");
  expect(resolveSettings({ fileData: file, env: { OTEL_RESOURCE_ATTRIBUTES: "k8s.pod.name=shop-0" } }).tracing.serviceName).toBe("from-file");
});

test("bad tracing values are named by their key or variable", () => {
  const bad = (input: Parameters<typeof resolveSettings>[0]) => {
    try {
      resolveSettings(input);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error("no error");
  };
  expect(bad({ fileData: { tracing: { endpoint: "collector:4318" } } })).toContain('config: tracing.endpoint: expected an http:// or https:// URL like "http://otel-collector:4318", or null (tracing off), got "collector:4318"');
  expect(bad({ fileData: { tracing: { sampler: "sometimes" } } })).toContain("tracing.sampler: expected one of");
  expect(bad({ fileData: { tracing: { samplerArg: 2 } } })).toContain("tracing.samplerArg: expected a number from 0 to 1");
  expect(bad({ env: { OTEL_TRACES_SAMPLER_ARG: "half" } })).toBe('OTEL_TRACES_SAMPLER_ARG: expected a number from 0 to 1, got "half"');
  expect(bad({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: "ftp://x" } })).toContain("OTEL_EXPORTER_OTLP_ENDPOINT: expected an http:// or https:// URL");
  expect(bad({ fileData: { tracing: { endpont: "http://x:4318" } } })).toContain('unknown key; did you mean "endpoint"?');
  expect(bad({ env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://x:4318/spans" } })).toBe(
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: expected an http:// or https:// URL ending in /v1/traces, like ' +
      '"http://otel-collector:4318/v1/traces", got "http://x:4318/spans"',
  );
  expect(bad({ env: { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } })).toBe(
    'OTEL_EXPORTER_OTLP_PROTOCOL: expected "http/json" or "http/protobuf" (kobun sends OTLP over HTTP, to the ' +
      'collector\'s port 4318), got "grpc"',
  );
});
