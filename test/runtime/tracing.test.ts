// Tracing on (an OTLP/HTTP endpoint given): each handling cycle is a trace whose root span
// names the object, its cause, handlers and outcome, with a child span per handler and per
// API request; the cycle's log lines carry its trace id; no attribute carries Secret data.
// The receiver is a plain HTTP server on 127.0.0.1 that keeps what the SDK posts (OTLP JSON).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { tracing } from "../../src/util/trace.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  status?: { code?: number };
  kind?: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
}

let e: Env;
let receiver: ReturnType<typeof Bun.serve>;
const spans: OtlpSpan[] = [];
const services = new Set<string>();
const resourceKeys = new Set<string>();
beforeAll(async () => {
  process.env.OTEL_RESOURCE_ATTRIBUTES = "k8s.pod.name=tracing-test-0";
  e = await env();
  receiver = Bun.serve({
    hostname: "127.0.0.1", port: 0,
    async fetch(request) {
      if (request.method !== "POST" || new URL(request.url).pathname !== "/v1/traces") return new Response("not here", { status: 404 });
      const body = (await request.json()) as { resourceSpans: { resource: { attributes: OtlpSpan["attributes"] }; scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const r of body.resourceSpans) {
        for (const a of r.resource.attributes) {
          resourceKeys.add(a.key);
          if (a.key === "service.name") services.add(String(a.value.stringValue));
        }
        for (const s of r.scopeSpans) spans.push(...s.spans);
      }
      return Response.json({});
    },
  });
});
afterAll(async () => {
  delete process.env.OTEL_RESOURCE_ATTRIBUTES;
  await receiver.stop(true);
  await e.stop();
});

const attr = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  if ("arrayValue" in value) return ((value.arrayValue as { values?: { stringValue: string }[] }).values ?? []).map((v) => v.stringValue);
  return value.stringValue ?? value.intValue ?? value.boolValue;
};

/** An operator on `registry` whose spans go to the receiver, with these OTEL_* variables besides the endpoint. */
function runTraced(registry: Registry, logger: ReturnType<typeof testLogger>["logger"], otel: Record<string, string>) {
  const stop = new AbortController();
  let started = false;
  const running = run({
    signal: stop.signal, client: e.client, registry, logger,
    settings: resolveSettings({
      flags: { namespaces: ["default"], standalone: true },
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`, ...otel },
    }),
    onStarted: () => (started = true),
  });
  return { started: () => started, stop: async () => { stop.abort(); await running; } };
}

test("a handled object yields a cycle span with its handler and PATCH children, and its log lines carry the trace id", async () => {
  const registry = new Registry();
  registry.on.create("v1/secrets", ({ logger }) => logger.info("handling the secret"), { id: "keep-secret" });
  const log = testLogger();
  const operator = runTraced(registry, log.logger, { OTEL_SERVICE_NAME: "tracing-test" });
  const secretValue = "hunter2-do-not-trace";
  let uid = "";
  try {
    await eventually(operator.started, "the operator to start");
    expect(tracing()).toBe(true);
    const created = await fetch(`${e.sandbox.url}/api/v1/namespaces/default/secrets`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ metadata: { name: "traced" }, stringData: { password: secretValue } }),
    });
    expect(created.status).toBe(201);
    uid = ((await created.json()) as { metadata: { uid: string } }).metadata.uid;
    // The batch is sent within a second of the cycle (scheduledDelayMillis); the stop flushes the rest.
    await eventually(() => spans.some((s) => s.name === "cycle secrets" && attr(s, "kobun.outcome") !== undefined), "the cycle span to arrive", 10_000);
  } finally {
    await operator.stop();
  }
  expect(tracing()).toBe(false);
  expect(services).toEqual(new Set(["tracing-test"]));
  const cycle = spans.find((s) => s.name === "cycle secrets" && attr(s, "kobun.cause") === "create")!;
  expect(cycle.parentSpanId ?? "").toBe("");
  expect(attr(cycle, "kobun.resource")).toBe("secrets");
  expect(attr(cycle, "k8s.namespace.name")).toBe("default");
  expect(attr(cycle, "kobun.object.name")).toBe("traced");
  expect(attr(cycle, "kobun.handlers")).toEqual(["keep-secret"]);
  expect(attr(cycle, "kobun.outcome")).toBe("written");
  const children = spans.filter((s) => s.parentSpanId === cycle.spanId);
  const handler = children.find((s) => s.name === "handler keep-secret")!;
  expect(attr(handler, "kobun.outcome")).toBe("success");
  const patch = children.find((s) => s.name === "PATCH")!;
  expect(attr(patch, "url.path")).toBe("/api/v1/namespaces/default/secrets/traced");
  expect(Number(attr(patch, "http.response.status_code"))).toBe(200);
  expect(patch.traceId).toBe(cycle.traceId);
  // A request to the API server is a CLIENT span (OTLP's 3), the cycle and the handler INTERNAL (1).
  expect([cycle.kind, handler.kind, patch.kind]).toEqual([1, 1, 3]);
  // Children within their parent's time: one clock per trace, not whole-millisecond starts.
  const time = (ns: string) => BigInt(ns);
  for (const child of [handler, patch]) {
    expect(time(child.startTimeUnixNano) >= time(cycle.startTimeUnixNano)).toBe(true);
    expect(time(child.endTimeUnixNano) <= time(cycle.endTimeUnixNano)).toBe(true);
  }
  // The SDK's own resource attributes, and OTEL_RESOURCE_ATTRIBUTES' (the test process's environment).
  expect(resourceKeys.has("telemetry.sdk.language")).toBe(true);
  expect(resourceKeys.has("k8s.pod.name")).toBe(true);
  expect(attr(cycle, "kobun.object.uid")).toBe(uid);
  // The handler's own log line, and only lines of that cycle, carry its trace id.
  expect(log.lines.some((l) => l.includes("handling the secret") && l.includes(`trace_id=${cycle.traceId}`))).toBe(true);
  expect(log.lines.filter((l) => l.includes("operator started")).some((l) => l.includes("trace_id="))).toBe(false);
  // Nothing of the Secret's data (plain or base64) in any span.
  const everything = JSON.stringify(spans);
  expect(everything).not.toContain(secretValue);
  expect(everything).not.toContain(Buffer.from(secretValue).toString("base64"));
}, 20_000);

test("a reconcile's cycle span has a child span of the call, named after the reconcile, with its outcome", async () => {
  const registry = new Registry();
  registry.on.reconcile("v1/configmaps", function mirror(ctx) {
    ctx.logger.info("reconciling");
  });
  const operator = runTraced(registry, testLogger().logger, { OTEL_SERVICE_NAME: "tracing-test" });
  try {
    await eventually(operator.started, "the operator to start");
    await e.client.create({ group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false }, "default", { metadata: { name: "traced-reconcile" } });
    await eventually(() => spans.some((s) => s.name === "reconcile mirror"), "the reconcile span to arrive", 10_000);
  } finally {
    await operator.stop();
  }
  const call = spans.find((s) => s.name === "reconcile mirror")!;
  const cycle = spans.find((s) => s.spanId === call.parentSpanId)!;
  expect(cycle.name).toBe("cycle configmaps");
  expect(attr(cycle, "kobun.cause")).toBe("reconcile");
  expect(attr(call, "kobun.outcome")).toBe("done");
  expect(call.traceId).toBe(cycle.traceId);
}, 20_000);

test("a trace the sampler leaves out: no spans sent, and the cycle's log lines carry no trace id that would lead nowhere", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ logger }) => logger.info("handling unsampled"), { id: "unsampled" });
  const log = testLogger();
  const operator = runTraced(registry, log.logger, { OTEL_SERVICE_NAME: "unsampled", OTEL_TRACES_SAMPLER: "always_off" });
  try {
    await eventually(operator.started, "the operator to start");
    await e.client.create({ group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false }, "default", { metadata: { name: "unsampled" } });
    await eventually(() => log.lines.some((l) => l.includes("handling unsampled")), "the handler to run", 10_000);
  } finally {
    await operator.stop(); // the stop flushes what was batched
  }
  expect(log.lines.filter((l) => l.includes("handling unsampled")).some((l) => l.includes("trace_id="))).toBe(false);
  expect(services.has("unsampled")).toBe(false);
}, 20_000);
