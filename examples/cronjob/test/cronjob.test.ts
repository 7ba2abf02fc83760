// The CronJob controller of handlers/cronjob.ts against a sandbox API server, as the kubebuilder
// book's suite tests it (a Job it owns shows in its status), and further: a due CronJob creates
// its Job, suspend, the Forbid and Replace policies, the history limits.
//
// The sandbox runs no Job controller: a test says what a Job's status is, as the Job controller
// would, through the kit's admin client (a /status patch). Time is the kit's virtual clock
// (`clock: "virtual"`): it stands still at the machine's time of the start until a test moves it
// to the next scheduled run (`kit.advance`), where the requeueAfter the reconcile asked for fires.

import { expect, test } from "bun:test";
import { adopt, Registry, resource } from "kobun";
import { startOperator, type TestOperator } from "kobun/testing";
import {
  CronJobs, cronJobOptions, reconcileCronJob, SCHEDULED_AT, type CronJob, type JobTemplate,
} from "../handlers/cronjob.ts";

const FIVE_MINUTES = 5 * 60_000;

/** The handler alone, in a registry of its own (other test files' handlers stay out of it). */
async function operator(): Promise<TestOperator> {
  const registry = new Registry();
  registry.on.reconcile(CronJobs, reconcileCronJob, cronJobOptions);
  return startOperator({ registry, clock: "virtual", logLevel: "silent", timeout: 10_000 });
}

/**
 * The first run of a "*\/5" schedule of `cronJob` (ms since the epoch): strictly after its creationTimestamp, as
 * the controller counts. Not from the kit's time: that stands at the start, and the sandbox stamps the creation
 * with the machine's time a moment later, so a start just before a 5-minute mark (or a creation right on one)
 * would expect a run the controller rightly never makes.
 */
function nextRun(cronJob: { metadata: { creationTimestamp?: string } }): number {
  const created = Date.parse(cronJob.metadata.creationTimestamp!);
  return Math.floor(created / FIVE_MINUTES) * FIVE_MINUTES + FIVE_MINUTES;
}

/** Moves the virtual clock to `at`, firing what falls due on the way. */
async function advanceTo(kit: TestOperator, at: number): Promise<void> {
  await kit.advance((at - kit.now().getTime()) / 1000);
}

const template: JobTemplate = {
  metadata: { labels: { app: "hello" } },
  spec: {
    template: {
      spec: { containers: [{ name: "hello", image: "busybox", args: ["date"] }], restartPolicy: "OnFailure" },
    },
  },
};

type Applied = { metadata: { name: string }; spec: CronJob["spec"] };

function cronJob(name: string, spec: Partial<CronJob["spec"]> = {}): Applied {
  return { metadata: { name }, spec: { schedule: "*/5 * * * *", jobTemplate: template, ...spec } };
}

/** The name and scheduled-at annotation of the Job of the run at `at` (a multiple of 5 minutes). */
function runAt(cronJobName: string, at: number): { name: string; scheduledAt: string } {
  return { name: `${cronJobName}-${at / 1000}`, scheduledAt: new Date(at).toISOString().replace(".000Z", "Z") };
}

/** What the Job controller would write into a Job's status. */
async function jobStatus(kit: TestOperator, name: string, status: Record<string, unknown>): Promise<void> {
  const jobs = await kit.client.resolve(resource.jobs);
  await kit.client.patch(jobs, "default", name, { status }, { subresource: "status" });
}
const complete = (startTime: string) => ({
  startTime, succeeded: 1, conditions: [{ type: "Complete", status: "True" }],
});
const failed = (startTime: string) => ({ startTime, failed: 1, conditions: [{ type: "Failed", status: "True" }] });

/** The names of the Jobs in the namespace, sorted. */
async function jobNames(kit: TestOperator): Promise<string[]> {
  const list = await kit.client.list(await kit.client.resolve(resource.jobs), { namespace: "default" });
  return (list.items ?? []).map((job) => job.metadata.name!).sort();
}

/** A Job made by hand (as the kubebuilder suite makes it), owned by the CronJob. */
async function ownedJob(kit: TestOperator, owner: CronJob, name: string): Promise<void> {
  await kit.apply("batch/v1/jobs", adopt({ metadata: { name }, spec: template.spec }, { owner }));
}

test("a CronJob that is due creates its Job, owned by it, and lists it as active", async () => {
  await using kit = await operator();
  kit.sandbox.stats.reset();
  const made = await kit.apply(CronJobs, cronJob("hello"));
  await kit.until(CronJobs, "hello", (o) => o.status?.observedGeneration === 1);
  const due = nextRun(made);
  await advanceTo(kit, due);
  const run = runAt("hello", due);
  const seen = await kit.until(CronJobs, "hello", (o) => o.status?.active?.length);
  // Everything it read came from its cache: no GET of the CronJob, no LIST of Jobs.
  const reads = kit.sandbox.stats.log.filter((r) => ["get", "list"].includes(r.verb) && r.plural?.endsWith("jobs"));
  expect(reads.map((r) => `${r.verb} ${r.path}`)).toEqual([]);
  expect(seen.status?.active?.map((ref) => ref.name)).toEqual([run.name]);
  expect(seen.status?.lastScheduleTime).toBe(run.scheduledAt);
  const job = (await kit.get(resource.jobs, run.name))!;
  expect(job.metadata.ownerReferences).toEqual([{
    apiVersion: "batch.tutorial.kubebuilder.io/v1", kind: "CronJob", name: "hello", uid: made.metadata.uid,
    controller: true, blockOwnerDeletion: true,
  }]);
  expect(job.metadata.annotations?.[SCHEDULED_AT]).toBe(run.scheduledAt);
  expect(job.metadata.labels?.app).toBe("hello");
  expect(await jobNames(kit)).toEqual([run.name]);
}, 30_000);

test("requeueAfter: no run before the scheduled time, one at it, and the next five minutes later", async () => {
  await using kit = await operator();
  await kit.apply(CronJobs, cronJob("soon"));
  const first = await kit.until(CronJobs, "soon", (o) => o.status?.observedGeneration === 1);
  expect(first.status?.active).toEqual([]);
  const due = nextRun(first);
  await advanceTo(kit, due - 1000);
  expect(await jobNames(kit)).toEqual([]);
  await advanceTo(kit, due);
  expect(await jobNames(kit)).toEqual([runAt("soon", due).name]);
  await advanceTo(kit, due + FIVE_MINUTES); // concurrencyPolicy Allow: the first still runs beside it
  expect(await jobNames(kit)).toEqual([runAt("soon", due).name, runAt("soon", due + FIVE_MINUTES).name].sort());
}, 30_000);

test("a Job it owns shows in status.active while it runs, and leaves it once it succeeded or failed", async () => {
  await using kit = await operator(); // time stands still: no run comes due
  const made = await kit.apply(CronJobs, cronJob("test-cronjob", { schedule: "1 * * * *" }));
  const first = await kit.until(CronJobs, "test-cronjob", (o) => o.status?.observedGeneration === 1);
  expect(first.status?.active).toEqual([]);
  await ownedJob(kit, made, "test-job");
  await jobStatus(kit, "test-job", { active: 2 });
  const running = await kit.until(CronJobs, "test-cronjob", (o) => o.status?.active?.length);
  expect(running.status?.active?.map((ref) => ref.name)).toEqual(["test-job"]);
  await ownedJob(kit, made, "other-job");
  await kit.until(CronJobs, "test-cronjob", (o) => o.status?.active?.length === 2);
  await jobStatus(kit, "test-job", complete(new Date().toISOString()));
  await jobStatus(kit, "other-job", failed(new Date().toISOString()));
  const done = await kit.until(CronJobs, "test-cronjob", (o) => o.status?.active?.length === 0);
  expect(done.status?.lastScheduleTime).toBeUndefined(); // Jobs made by hand are no scheduled run
  expect(await jobNames(kit)).toEqual(["other-job", "test-job"]); // no history limit: both stay
}, 30_000);

test("a suspended CronJob starts no run; once resumed, it starts only the latest run it missed", async () => {
  await using kit = await operator();
  await kit.apply(CronJobs, cronJob("paused", { suspend: true }));
  const paused = await kit.until(CronJobs, "paused", (o) => o.status?.observedGeneration === 1);
  const latest = nextRun(paused) + FIVE_MINUTES;
  await advanceTo(kit, latest + 60_000); // two runs missed
  expect(await jobNames(kit)).toEqual([]);
  await kit.apply(CronJobs, cronJob("paused", { suspend: false }));
  const resumed = await kit.until(CronJobs, "paused", (o) => o.status?.active?.length);
  expect(resumed.status?.active?.map((ref) => ref.name)).toEqual([runAt("paused", latest).name]);
  expect(await jobNames(kit)).toEqual([runAt("paused", latest).name]);
}, 30_000);

/**
 * A CronJob of `policy` whose first run is active, then the clock moved to its second run (where
 * the reconcile's requeueAfter fires): the names of both runs' Jobs.
 */
async function secondRunDue(kit: TestOperator, name: string, policy: "Forbid" | "Replace") {
  await kit.apply(CronJobs, cronJob(name, { concurrencyPolicy: policy }));
  const made = await kit.until(CronJobs, name, (o) => o.status?.observedGeneration === 1);
  const due = nextRun(made);
  const [first, second] = [runAt(name, due), runAt(name, due + FIVE_MINUTES)];
  await advanceTo(kit, due);
  await kit.until(CronJobs, name, (o) => o.status?.active?.[0]?.name === first.name);
  await advanceTo(kit, due + FIVE_MINUTES);
  return { first, second };
}

test("Forbid: the next run waits while one is active, and starts once it finished", async () => {
  await using kit = await operator();
  const { first, second } = await secondRunDue(kit, "one", "Forbid");
  expect(await jobNames(kit)).toEqual([first.name]); // it waits
  await jobStatus(kit, first.name, complete(new Date().toISOString()));
  const next = await kit.until(CronJobs, "one", (o) => o.status?.active?.[0]?.name === second.name);
  expect(next.status?.lastScheduleTime).toBe(second.scheduledAt);
  expect(await jobNames(kit)).toEqual([first.name, second.name]);
}, 30_000);

test("Replace: the next run deletes the active one and takes its place", async () => {
  await using kit = await operator();
  const { first, second } = await secondRunDue(kit, "swap", "Replace");
  await kit.until(CronJobs, "swap", (o) => o.status?.active?.length === 1 && o.status.active[0]!.name === second.name);
  await kit.gone(resource.jobs, first.name);
  expect(await jobNames(kit)).toEqual([second.name]);
}, 30_000);

test("history limits: the oldest finished Jobs beyond them are deleted, running ones never", async () => {
  await using kit = await operator(); // time stands still: no run comes due, the Jobs are made here
  const made = await kit.apply(CronJobs, cronJob("tidy", { successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 }));
  await ownedJob(kit, made, "tidy-running");
  const startedAt = (minute: number) => new Date(Date.UTC(2030, 0, 1, 0, minute)).toISOString().replace(".000Z", "Z");
  for (const [name, finished, minute] of [
    ["tidy-ok-1", complete, 1], ["tidy-failed-1", failed, 2], ["tidy-ok-2", complete, 3],
    ["tidy-failed-2", failed, 4], ["tidy-ok-3", complete, 5],
  ] as const) {
    await ownedJob(kit, made, name);
    await jobStatus(kit, name, finished(startedAt(minute)));
  }
  for (const name of ["tidy-ok-1", "tidy-ok-2", "tidy-failed-1"]) await kit.gone(resource.jobs, name);
  expect(await jobNames(kit)).toEqual(["tidy-failed-2", "tidy-ok-3", "tidy-running"]);
  const seen = await kit.until(CronJobs, "tidy", (o) => o.status?.active?.length === 1);
  expect(seen.status?.active?.[0]?.name).toBe("tidy-running");
}, 30_000);
