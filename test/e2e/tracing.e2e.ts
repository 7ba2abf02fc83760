// A real Jaeger receives the binary's traces over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT): a
// created object yields a trace whose root is the handling cycle (resource, namespace, name,
// cause, handlers, outcome) with the handler's span and the PATCH's as its children, on the
// real kube-apiserver as on the sandbox; and an on.reconcile's trace (an operator in this process):
// the call's span under the cycle, its request under the call. Jaeger is built from Go modules
// (test/jaeger/build.sh).
//
//   test/jaeger/build.sh && cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./tracing.e2e.ts
//
// Needs dist/kobun (`bun run build.ts`).

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { run } from "../../src/runtime/operator.ts";
import { Logger, memorySink } from "../../src/util/log.ts";
import { createNamespace, eventually, EXAMPLES } from "./harness/kube.ts";
import { startJaeger, type JaegerSpan } from "./harness/jaeger.ts";
import { KOBUN, ROOT, startOperator } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const tag = (span: JaegerSpan, key: string): unknown => span.tags.find((t) => t.key === key)?.value;
const parentOf = (span: JaegerSpan): string | undefined => span.references.find((r) => r.refType === "CHILD_OF")?.spanID;

describe.each(selectedTargets())("Jaeger receives the operator's traces against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "handlers/kobunexample.crd.yaml")], cleanup: [EXAMPLES] });

  test("a created object's trace: the cycle span with its create_fn handler and PATCH children; the trace id in its log lines", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-trace");
    const jaeger = await startJaeger();
    const service = `kobun-e2e-${targetName}`;
    const op = startOperator("op-trace", t.kubeconfigPath, ["--standalone", "-n", ns], KOBUN, { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_SERVICE_NAME: service, OTEL_RESOURCE_ATTRIBUTES: "k8s.pod.name=op-trace-0" });
    try {
      await op.waitForLog(/tracing on/, 15_000);
      await op.waitForLog(/operator started/, 15_000);
      await t.client.create(EXAMPLES, ns, { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "traced" }, spec: { size: 1 } });
      // The SDK sends its batch within a second of the cycle; Jaeger stores it at once.
      const [cycle, spans] = await eventually("the cycle's trace in Jaeger", async () => {
        for (const trace of await jaeger.traces(service)) {
          // The first create cycle only adds the finalizer (no handler runs); the next runs create_fn.
          const root = trace.find((s) => s.operationName === "cycle kobunexamples.kobun.dev" && tag(s, "kobun.object.name") === "traced" && String(tag(s, "kobun.handlers")).includes("create_fn"));
          const children = root ? trace.filter((s) => parentOf(s) === root.spanID) : [];
          if (root && children.some((s) => s.operationName === "PATCH")) return [root, trace] as const;
        }
        return undefined;
      }, { timeoutMs: 30_000, intervalMs: 250 });
      expect(parentOf(cycle)).toBeUndefined();
      expect(tag(cycle, "k8s.namespace.name")).toBe(ns);
      expect(tag(cycle, "kobun.resource")).toBe("kobunexamples.kobun.dev");
      expect(tag(cycle, "kobun.cause")).toBe("create");
      expect(tag(cycle, "kobun.outcome")).toBe("written");
      const children = spans.filter((s) => parentOf(s) === cycle.spanID);
      const handler = children.find((s) => s.operationName === "handler create_fn")!;
      expect(tag(handler, "kobun.outcome")).toBe("success");
      const patch = children.find((s) => s.operationName === "PATCH")!;
      expect(String(tag(patch, "url.path"))).toStartWith(`/apis/kobun.dev/v1/namespaces/${ns}/kobunexamples/traced`);
      expect(Number(tag(patch, "http.response.status_code"))).toBe(200);
      // A request to the API server is a CLIENT span; the cycle and the handler are the operator's own work.
      expect([tag(cycle, "span.kind"), tag(handler, "span.kind"), tag(patch, "span.kind")]).toEqual(["internal", "internal", "client"]);
      // Children within their parent's time: Jaeger finds no clock skew to adjust in the trace.
      expect(spans.flatMap((s) => s.warnings ?? [])).toEqual([]);
      // The resource: the SDK's attributes, OTEL_RESOURCE_ATTRIBUTES' (telling replicas apart), the service name.
      const resource = Object.fromEntries(cycle.process.tags.map((t) => [t.key, t.value]));
      expect(resource).toMatchObject({ "telemetry.sdk.language": "nodejs", "k8s.pod.name": "op-trace-0" });
      expect(cycle.process.serviceName).toBe(service);
      // The handler's log line of that cycle carries the trace id Jaeger shows.
      expect(op.lines.some((l) => l.includes(`trace_id=${cycle.traceID}`))).toBe(true);
    } finally {
      await op.stop();
      await jaeger.stop();
    }
  }, 90_000);

  test("an on.reconcile's trace: the cycle, the call's span under it with its own request, kobun's PATCH beside it", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-trace-rec");
    const jaeger = await startJaeger();
    const service = `kobun-e2e-reconcile-${targetName}`;
    // In this process (the binaries have no reconcile): the same run() the binary's `kobun run` calls.
    const registry = new Registry();
    registry.on.reconcile("v1/configmaps", async function mirror(ctx) {
      await ctx.api.get("configmaps", ctx.name);
      ctx.patch.metadata.annotations = { "e2e.kobun.dev/mirrored": "yes" };
    }, { when: (ctx) => ctx.labels["e2e.kobun.dev/trace"] === "yes" });
    const client = await KubeClient.connect({ kubeconfig: t.kubeconfigPath });
    const halt = new AbortController();
    const settings = resolveSettings({
      flags: { namespaces: [ns], standalone: true },
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_SERVICE_NAME: service },
    });
    const started = Promise.withResolvers<void>();
    const running = run({ signal: halt.signal, settings, client, registry, logger: new Logger(memorySink("error")), onStarted: () => started.resolve() });
    try {
      await started.promise;
      const labels = { "e2e.kobun.dev/trace": "yes" };
      await t.client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "traced", labels } });
      const [cycle, spans] = await eventually("the reconcile's trace in Jaeger", async () => {
        for (const trace of await jaeger.traces(service)) {
          const root = trace.find((s) => s.operationName === "cycle configmaps" && tag(s, "kobun.object.name") === "traced");
          if (root && trace.some((s) => s.operationName === "PATCH")) return [root, trace] as const;
        }
        return undefined;
      }, { timeoutMs: 30_000, intervalMs: 250 });
      expect(parentOf(cycle)).toBeUndefined();
      expect(tag(cycle, "kobun.cause")).toBe("reconcile");
      const call = spans.find((s) => s.operationName === "reconcile mirror")!;
      expect(parentOf(call)).toBe(cycle.spanID);
      expect(tag(call, "kobun.outcome")).toBe("done");
      // Its GET (after any discovery its first ctx.api call made, also under the call).
      const get = spans.find((s) => s.operationName === "GET" && tag(s, "url.path") === `/api/v1/namespaces/${ns}/configmaps/traced`)!;
      expect(parentOf(get)).toBe(call.spanID);
      const patch = spans.find((s) => s.operationName === "PATCH")!;
      expect(parentOf(patch)).toBe(cycle.spanID);
      expect([tag(get, "span.kind"), tag(patch, "span.kind")]).toEqual(["client", "client"]);
      expect(spans.flatMap((s) => s.warnings ?? [])).toEqual([]);
    } finally {
      halt.abort();
      await running;
      client.close();
      await jaeger.stop();
    }
  }, 90_000);
});
