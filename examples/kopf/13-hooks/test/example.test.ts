import { expect, test } from "bun:test";
import { memorySink } from "kobun";
import { jsonLine, records, request, runOperator, sandboxWithCrd } from "../../testing.ts";
import { cluster, registry, timing } from "../handlers/example.ts";

test("13-hooks: login and startup (retried) before the watches; probes; cleanup stops the tasks", async () => {
  const sandbox = await sandboxWithCrd();
  try {
    Object.assign(timing, { retryDelay: 0.05, loginDelay: 0.05, serveEvery: () => 0.05 });
    cluster.kubeconfig = sandbox.kubeconfigPath;
    const logs = memorySink("info", "json");
    const operator = await runOperator(sandbox, registry, { flags: { liveness: "http://127.0.0.1:0/healthz" }, logs });
    try {
      // Before "operator started": the login, then the startup handlers in order, the retried one
      // failing three times (each logged, then retried after its delay) and succeeding on its fourth attempt.
      const all = records(logs);
      const before = all.slice(0, all.findIndex((r) => r.msg === "operator started"));
      const startups = before.filter((r) => r.startup !== undefined || r.login !== undefined);
      const seen: Record<string, unknown>[] = startups.map(({ msg, startup, login, error, retry }) =>
        ({ msg, of: startup ?? login, error, retry }));
      expect(seen)
        .toEqual([
          { msg: "Logging in in 0.05s...", of: "login_fn" },
          { msg: "Activity 'login_fn' succeeded.", of: "login_fn" },
          { msg: "Initialising the task-lock...", of: "startup_fn_simple" },
          { msg: "Activity 'startup_fn_simple' succeeded.", of: "startup_fn_simple" },
          ...[3, 2, 1].map((left, retry) => ({
            msg: "startup handler failed; retrying", of: "startup_fn_retried", error: `Going to succeed in ${left}s`, retry,
          })),
          { msg: "Starting retried...", of: "startup_fn_retried" },
          { msg: "Activity 'startup_fn_retried' succeeded.", of: "startup_fn_retried" },
        ]);
      // Each retry came after the TemporaryError's delay.
      const retried = startups.filter((r) => r.startup === "startup_fn_retried").map((r) => Date.parse(String(r.time)));
      for (let i = 1; i < retried.length - 1; i++) expect(retried[i]! - retried[i - 1]!).toBeGreaterThanOrEqual(45);
      await request(sandbox, "POST", "/api/v1/namespaces/default/pods", {
        apiVersion: "v1", kind: "Pod", metadata: { name: "watched" },
        spec: { containers: [{ name: "main", image: "busybox" }] },
      });
      const served = records({ lines: [await logs.until(jsonLine("Served by the background task."))] })[0]!;
      expect(served.name).toBe("watched");
      const health = await (await fetch(operator.probeUrl!)).json() as { probes?: Record<string, unknown> };
      expect(health.probes).toEqual({ tasks_count: 1, monitored_objects: { default: ["watched"] } });
    } finally {
      await operator.stop();
    }
    const cleanup = records(logs).filter((r) => r.cleanup === "cleanup_fn").map((r) => r.msg);
    expect(cleanup).toEqual(["Cleaning up...", "All pod-tasks are requested to stop...", "Activity 'cleanup_fn' succeeded."]);
    await logs.until(jsonLine("Serving is finished by request."));
  } finally {
    await sandbox.stop();
  }
}, 15_000);
