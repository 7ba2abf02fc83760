// The kit writes a status subresource (issue 35, item 6), as a controller under test would see
// another controller write it (kubebuilder's `Status().Update()`): `patchStatus` (a merge patch)
// and `apply(..., { subresource: "status" })` (server-side apply). Against the sandbox.

import { expect, test } from "bun:test";
import { Registry, resource, type Job } from "kobun";
import { startOperator } from "kobun/testing";

/** The operator under test reacts to a Job's status, which only another controller writes. */
function jobWatcher() {
  const registry = new Registry();
  registry.on.reconcile(resource.jobs, ({ body, patch }) => {
    const succeeded = body.status?.succeeded;
    if (succeeded) patch.metadata.labels = { finished: String(succeeded) };
  }, { on: "any" }); // status changes too: only another controller writes a Job's status
  return registry;
}

const job: Job = {
  apiVersion: "batch/v1", kind: "Job", metadata: { name: "backup" },
  spec: { template: { spec: { containers: [{ name: "backup", image: "busybox" }], restartPolicy: "Never" } } },
};

test("patchStatus writes through /status: the handler watching the status sees it, the spec is untouched", async () => {
  await using kit = await startOperator({ registry: jobWatcher(), logLevel: "silent" });
  await kit.apply(resource.jobs, job);
  kit.sandbox.stats.reset();
  const answer = await kit.patchStatus(resource.jobs, "backup", { succeeded: 1, active: 0 });
  expect(answer.status?.succeeded).toBe(1);
  expect(kit.sandbox.stats.log.filter((r) => r.method === "PATCH").map((r) => r.path))
    .toContain("/apis/batch/v1/namespaces/default/jobs/backup/status");
  const seen = await kit.until(resource.jobs, "backup", (j) => j.metadata.labels?.finished);
  expect(seen.metadata.labels?.finished).toBe("1");
  expect(seen.spec?.template.spec?.containers[0]?.image).toBe("busybox");
});

test("apply with subresource status applies the status and the metadata sent, never the spec", async () => {
  await using kit = await startOperator({ registry: jobWatcher(), logLevel: "silent" });
  await kit.apply(resource.jobs, job);
  const applied = await kit.apply(
    resource.jobs,
    { metadata: { name: "backup", labels: { ignored: "yes" } }, status: { succeeded: 2 } },
    { subresource: "status" },
  );
  expect(applied.status?.succeeded).toBe(2);
  // a built-in kind's /status takes the metadata it is sent (a Job's labels; not a Deployment's), as kube-apiserver
  // does (test/e2e/sandbox-fidelity-4.e2e.ts); a custom resource's takes none
  expect(applied.metadata.labels?.ignored).toBe("yes");
  const seen = await kit.until(resource.jobs, "backup", (j) => j.metadata.labels?.finished === "2");
  expect(seen.spec?.template.spec?.containers[0]?.image).toBe("busybox"); // the spec is the first apply's
});

test("a status write to a resource without a status subresource is refused, saying what to do instead", async () => {
  await using kit = await startOperator({ registry: new Registry(), logLevel: "silent" });
  await kit.apply(resource.configmaps, { metadata: { name: "plain" }, data: { a: "1" } });
  const untyped: string = "configmaps"; // a ConfigMap's type has no status: the compiler refuses the typed call
  const error = await kit.patchStatus(untyped, "plain", { x: 1 }).catch((e: Error) => e);
  expect((error as Error).message).toBe(
    "patchStatus: configmaps has no status subresource; apply the object with its status instead " +
      "(its CRD can declare `subresources: { status: {} }`)",
  );
});
