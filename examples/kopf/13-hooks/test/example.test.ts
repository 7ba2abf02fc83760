import { expect, test } from "bun:test";
import { request, runOperator, sandboxWithCrd } from "../../testing.ts";
import { cluster, journal, registry, timing } from "../handlers/example.ts";

test("13-hooks: login and startup (retried) before the watches; probes; cleanup stops the tasks", async () => {
  const sandbox = await sandboxWithCrd();
  try {
    Object.assign(timing, { retryDelay: 0.05, loginDelay: 0.05, serveEvery: () => 0.05 });
    cluster.kubeconfig = sandbox.kubeconfigPath;
    journal.clear();
    const operator = await runOperator(sandbox, registry, { flags: { liveness: "http://127.0.0.1:0/healthz" } });
    try {
      // Everything before "operator started": the login, then the startup handlers, the retried one
      // succeeding on its fourth attempt.
      expect(journal.lines).toEqual([
        "Logging in in 0.05s...",
        "Initialising the task-lock...",
        "Handler 'startup_fn_retried' failed temporarily: Going to succeed in 3s",
        "Handler 'startup_fn_retried' failed temporarily: Going to succeed in 2s",
        "Handler 'startup_fn_retried' failed temporarily: Going to succeed in 1s",
        "Starting retried...",
      ]);
      await request(sandbox, "POST", "/api/v1/namespaces/default/pods", {
        apiVersion: "v1", kind: "Pod", metadata: { name: "watched" },
        spec: { containers: [{ name: "main", image: "busybox" }] },
      });
      await journal.has("Served by the background task.");
      const health = await (await fetch(operator.probeUrl!)).json() as { probes?: Record<string, unknown> };
      expect(health.probes).toEqual({ tasks_count: 1, monitored_objects: { default: ["watched"] } });
    } finally {
      await operator.stop();
    }
    expect(journal.lines).toContain("Cleaning up...");
    expect(journal.lines).toContain("All pod-tasks are requested to stop...");
    await journal.has("Serving is finished by request.");
  } finally {
    await sandbox.stop();
  }
});
