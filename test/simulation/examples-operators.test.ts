// The repository's own operators under simulation: the example operator of handlers/ (create,
// update and delete handlers, children by server-side apply, a daemon, a timer, an index) and the
// kubebuilder CronJob controller of examples/cronjob (on.reconcile owning Jobs, requeueAfter to
// the next run on the virtual clock). Each must end as its fault-free run does under every
// schedule, with every deletion completed; the CronJob also keeps "Forbid: at most one active
// Job" after every step.

import { expect, test } from "bun:test";
import { registry as globalRegistry, resource, Registry } from "kobun";
import { simulate, type World } from "kobun/testing";
import {
  CronJobs, cronJobOptions, reconcileCronJob, type JobTemplate,
} from "../../examples/cronjob/handlers/cronjob.ts";
import "../../handlers/example.ts";
import "../../handlers/children.ts";
import "../../handlers/background.ts";

const EXAMPLES = "kobunexamples.kobun.dev/v1";

test("handlers/: the example operator passes every schedule of create, change, time passing and delete", async () => {
  const result = await simulate({
    registry: globalRegistry,
    horizon: 12, // its daemon beats every 5 s, its timer every 10: a settle fires each a few times, not for a minute
    crds: [new URL("../../handlers/kobunexample.crd.yaml", import.meta.url).pathname],
    scenario: async (world: World) => {
      const labels = { "kobun.dev/example": "site" };
      await world.apply(EXAMPLES, { metadata: { name: "site", labels }, spec: { size: 1, content: "<h1>a</h1>" } });
      const heartbeat = { "kobun.dev/example": "heartbeat" };
      await world.apply(EXAMPLES, { metadata: { name: "beat", labels: heartbeat }, spec: { team: "blue" } });
      await world.apply(EXAMPLES, { metadata: { name: "site", labels }, spec: { size: 2, content: "<h1>b</h1>" } });
      await world.advance(30); // the heartbeat timer's rounds (every 10 s), the daemon's beats (every 5 s)
      await world.delete(EXAMPLES, "beat");
      await world.delete(EXAMPLES, "site");
    },
  });
  expect(result.runs.length).toBeGreaterThan(0);
  expect(result.runs.every((run) => run.ok)).toBe(true);
}, 180_000);

const template: JobTemplate = {
  spec: { template: { spec: { containers: [{ name: "hello", image: "busybox" }], restartPolicy: "OnFailure" } } },
};

type JobLike = { metadata: { name?: string }; status?: { conditions?: { type: string; status: string }[] } };
const finished = (job: JobLike) => (job.status?.conditions ?? []).some((c) => c.status === "True");

/** What the Job controller would write when each Job still running finishes. */
async function completeJobs(world: World): Promise<void> {
  for (const job of (await world.list(resource.jobs)) as JobLike[]) {
    if (finished(job)) continue;
    await world.patchStatus(resource.jobs, job.metadata.name!, {
      succeeded: 1, conditions: [{ type: "Complete", status: "True" }],
    } as never);
  }
}

test("examples/cronjob: runs, Forbid and the history limit hold under every schedule", async () => {
  const registry = new Registry();
  registry.on.reconcile(CronJobs, reconcileCronJob, cronJobOptions);
  const result = await simulate({
    registry,
    volatile: ["status.active.*.uid"],
    invariants: {
      "Forbid: at most one active Job": async (world) => {
        const active = ((await world.list(resource.jobs)) as JobLike[]).filter((job) => !finished(job));
        return active.length <= 1 || `${active.length} active: ${active.map((j) => j.metadata.name).join(", ")}`;
      },
    },
    scenario: async (world) => {
      await world.apply(CronJobs, {
        metadata: { name: "hello" },
        spec: { schedule: "*/5 * * * *", concurrencyPolicy: "Forbid", successfulJobsHistoryLimit: 1, jobTemplate: template },
      });
      await world.advance(300); // a run falls due: its Job is made
      await world.advance(300); // the next one waits: the first is still active (Forbid)
      await completeJobs(world);
      await world.advance(300); // now it runs; the first, finished, is pruned past the limit of 1 once this one ends
      await completeJobs(world);
      await world.delete(CronJobs, "hello");
    },
  });
  expect(result.runs.every((run) => run.ok)).toBe(true);
}, 180_000);
