// A real Prometheus scrapes the binary's /metrics, and PromQL over its HTTP API shows the
// reconciles and handler runs of the objects the operator handled, on the real kube-apiserver
// as on the sandbox. Prometheus is built from Go modules (test/prometheus/build.sh).
//
//   test/prometheus/build.sh && cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./observability.e2e.ts
//
// Needs dist/kobun (`bun run build.ts`).

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createNamespace, eventually, EXAMPLES } from "./harness/kube.ts";
import { ROOT, startOperator } from "./harness/operator.ts";
import { startPrometheus } from "./harness/prometheus.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const OBJECTS = 5;

describe.each(selectedTargets())("Prometheus scrapes the operator against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "handlers/kobunexample.crd.yaml")], cleanup: [EXAMPLES] });

  test("PromQL shows one create_fn success per object handled, their reconciles, and the target up", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-prom");
    const op = startOperator("op-prom", t.kubeconfigPath, ["--standalone", "-n", ns, "--metrics-addr", "127.0.0.1:0"]);
    try {
      const serving = await op.waitForLog(/serving metrics/, 15_000);
      const metricsUrl = new URL(/url=(\S+)/.exec(serving)![1]!);
      for (let i = 0; i < OBJECTS; i++) {
        await t.client.create(EXAMPLES, ns, { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: `prom-${i}` }, spec: { size: i } });
      }
      await eventually(`${OBJECTS} objects handled`, async () => {
        const list = await t.client.list(EXAMPLES, { namespace: ns });
        return list.items.filter((o) => o.status?.create_fn).length === OBJECTS;
      }, { timeoutMs: 30_000 });

      const prometheus = await startPrometheus([metricsUrl.host]);
      try {
        const controller = "kobunexamples.kobun.dev";
        const runs = `sum(kobun_handler_runs_total{job="kobun",controller="${controller}",handler="create_fn",cause="create",outcome="success"})`;
        // Scraped every second: wait for a scrape that saw every object (the counters only go up).
        const seen = await eventually("Prometheus to see every create_fn run", async () => {
          const [sample] = await prometheus.query(runs);
          return sample && sample.value >= OBJECTS ? sample.value : undefined;
        }, { timeoutMs: 30_000, intervalMs: 250 });
        expect(seen).toBe(OBJECTS);
        const [up] = await prometheus.query(`up{job="kobun"}`);
        expect(up?.value).toBe(1);
        const [reconciled] = await prometheus.query(`sum(controller_runtime_reconcile_total{job="kobun",controller="${controller}",result="success"})`);
        expect(reconciled!.value).toBeGreaterThanOrEqual(OBJECTS);
        const [errors] = await prometheus.query(`sum(controller_runtime_reconcile_errors_total{job="kobun",controller="${controller}"})`);
        expect(errors?.value).toBe(0);
        // Every result is there from the start, at 0 when none came, as in controller-runtime: rate() and
        // alerts on result="error" read 0, not "no data".
        const results = await prometheus.query(`controller_runtime_reconcile_total{job="kobun",controller="${controller}"}`);
        expect(results.map((r) => r.metric.result).sort()).toEqual(["error", "requeue", "requeue_after", "success"]);
        const errors1m = `rate(controller_runtime_reconcile_total{job="kobun",controller="${controller}",result="error"}[1m])`;
        // rate() needs two scrapes of the series.
        const errorRate = await eventually("a rate of errors", async () => (await prometheus.query(errors1m))[0], { timeoutMs: 10_000, intervalMs: 250 });
        expect(errorRate.value).toBe(0);
        // The workqueue_* family under controller-runtime's labels: name and controller, both the controller.
        const [adds] = await prometheus.query(`workqueue_adds_total{job="kobun",name="${controller}",controller="${controller}"}`);
        expect(adds!.value).toBeGreaterThanOrEqual(OBJECTS);
        const [depth] = await prometheus.query(`workqueue_depth{job="kobun",name="${controller}",controller="${controller}"}`);
        expect(depth?.value).toBe(0);
        const [patches] = await prometheus.query(`sum(rest_client_requests_total{job="kobun",method="PATCH",code="200"})`);
        expect(patches!.value).toBeGreaterThanOrEqual(OBJECTS);
      } finally {
        await prometheus.stop();
      }
    } finally {
      await op.stop();
    }
  }, 90_000);
});
