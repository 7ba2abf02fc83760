// The example of docs/testing.md ("Status, windows of time, Events and log lines"), run: the kit
// playing the Job controller for an operator that reacts to a Job's status.

import { expect, test } from "bun:test";
import { Registry, resource } from "kobun";
import { startOperator } from "kobun/testing";

const registry = new Registry();
registry.on.reconcile(resource.jobs, ({ body, patch, event }) => {
  if (!body.status?.succeeded) return;
  patch.metadata.labels = { finished: "true" };
  event.info(body, "Finished", `${body.metadata.name} succeeded`);
}, { on: "any" });                                    // status changes run it too

test("a finished Job is labelled once, announced, and logged", async () => {
  await using kit = await startOperator({ registry, logLevel: "silent", logCapture: "debug" });
  const job = await kit.apply(resource.jobs, {
    metadata: { name: "backup" },
    spec: { template: { spec: { containers: [{ name: "backup", image: "busybox" }], restartPolicy: "Never" } } },
  });
  await kit.consistently(resource.jobs, "backup", (j) => !j?.metadata.labels?.finished, { for: 200 });
  await kit.patchStatus(resource.jobs, "backup", { succeeded: 1 });   // as the Job controller would
  await kit.until(resource.jobs, "backup", (j) => j.metadata.labels?.finished === "true");
  const events = await kit.events(job, { until: (list) => list.some((e) => e.reason === "Finished") });
  expect(events.find((e) => e.reason === "Finished")?.message).toBe("backup succeeded");
  await kit.logs.until(/Reconciled\./);              // a line of the operator's log, awaited as it is written
});
