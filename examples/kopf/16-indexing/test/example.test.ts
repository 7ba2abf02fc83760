import { expect, test } from "bun:test";
import { memorySink, Registry } from "kobun";
import type { Sandbox } from "kobun/sandbox";
import { sampleObject } from "../../kopf.ts";
import { examplesPath, logLine, request, runOperator, sandboxWithCrd } from "../../testing.ts";
import { indexing } from "../handlers/example.ts";

async function pod(sandbox: Sandbox, name: string, labels: Record<string, string>, phase?: string) {
  const path = "/api/v1/namespaces/default/pods";
  const spec = { containers: [{ name: "main", image: "busybox" }] };
  await request(sandbox, "POST", path, { apiVersion: "v1", kind: "Pod", metadata: { name, labels }, spec });
  if (phase) await request(sandbox, "PATCH", `${path}/${name}/status`, { status: { phase } });
}

test("16-indexing: the indexes follow the Pods; the timer and the probes read them", async () => {
  const sandbox = await sandboxWithCrd();
  try {
    const logs = memorySink("info");
    const operator = await runOperator(sandbox, indexing(new Registry(), 0.1), {
      flags: { liveness: "http://127.0.0.1:0/healthz" }, logs,
    });
    try {
      await pod(sandbox, "web-1", { app: "web" }, "Running");
      await pod(sandbox, "job-1", { app: "batch", tier: "low" });
      await request(sandbox, "POST", examplesPath(), { apiVersion: "kopf.dev/v1", kind: "KopfExample", ...sampleObject() });
      const byLabel = [[["app", "web"], ["web-1"]], [["app", "batch"], ["job-1"]], [["tier", "low"], ["job-1"]]];
      // Once the timer has logged both Pods, the indexes hold both: the probes read them as they are.
      await logs.until(logLine(JSON.stringify(byLabel)), { timeout: 10_000 });
      const health = await (await fetch(operator.probeUrl!)).json() as { probes?: Record<string, unknown> };
      expect(health.probes?.pod_count).toBe(2);
      expect((health.probes?.pod_names as string[]).sort()).toEqual(["job-1", "web-1"]);
      // The timer's patch lands after its call: await the object's status through the sandbox's watch.
      let object = await request(sandbox, "GET", examplesPath("kopf-example-1"));
      while (!object.status?.["running-pods"]) {
        await sandbox.waitFor((r) => r.verb === "patch" && r.path.includes("kopfexamples"), 5_000);
        object = await request(sandbox, "GET", examplesPath("kopf-example-1"));
      }
      expect(object.status["running-pods"]).toEqual(["default::web-1"]);
    } finally {
      await operator.stop();
    }
  } finally {
    await sandbox.stop();
  }
});
