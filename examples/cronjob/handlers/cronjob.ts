// The kubebuilder book's CronJob controller (book.kubebuilder.io/cronjob-tutorial), as one kobun
// `on.reconcile`. Each call looks at the CronJob and the Jobs it owns as they are now (from the
// operator's cache, never staler than this operator's own writes), writes what it sees into the
// status, prunes finished Jobs past the history limits, starts the latest missed run if the
// concurrency policy allows, and asks to be called again at the next scheduled time. kobun calls
// it again when the CronJob changes or any Job it owns changes (`owns`): no wake plumbing here,
// and no re-read of the CronJob.
//
// Where it differs from the book: the schedule is read by ./schedule.ts (UTC, no robfig/cron);
// lastScheduleTime is kept when no Job says a later time (the book clears it once the history
// limits have deleted every Job, and would then start every run missed since creation again);
// a schedule that cannot be read, or too many missed runs, is a PermanentError (the book logs
// and returns without error: both wait for the next change).

import Type from "typebox";
import {
  adopt, ApiError, defineResource, now as handlerTime, on, PermanentError, resource,
  type Job, type ObjectOf, type ReconcileContext, type ReconcileOptions, type ReconcileResult, type TargetObject,
} from "kobun";
import { parseSchedule, type Schedule } from "./schedule.ts";

/** What a Job made from the CronJob looks like, as `spec.jobTemplate` says it (a batch/v1 JobTemplateSpec). */
export interface JobTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: NonNullable<Job["spec"]>;
}

const ObjectReference = Type.Object({
  apiVersion: Type.String(), kind: Type.String(), name: Type.String(), namespace: Type.String(), uid: Type.String(),
});

export const CronJobs = defineResource({
  group: "batch.tutorial.kubebuilder.io", kind: "CronJob", plural: "cronjobs",
  schema: {
    spec: Type.Object({
      schedule: Type.String({ minLength: 1 }),
      /** Seconds after its scheduled time that a missed run may still start. */
      startingDeadlineSeconds: Type.Optional(Type.Integer({ minimum: 0 })),
      /** Allow: runs may overlap; Forbid: skip a run while one is active; Replace: the new run replaces it. */
      concurrencyPolicy: Type.Optional(
        Type.Union([Type.Literal("Allow"), Type.Literal("Forbid"), Type.Literal("Replace")]),
      ),
      /** Starts no run while true (runs already started go on). */
      suspend: Type.Optional(Type.Boolean()),
      jobTemplate: Type.Unsafe<JobTemplate>(Type.Object({}, { "x-kubernetes-preserve-unknown-fields": true })),
      successfulJobsHistoryLimit: Type.Optional(Type.Integer({ minimum: 0 })),
      failedJobsHistoryLimit: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
    status: Type.Object({
      active: Type.Optional(Type.Array(ObjectReference)),
      lastScheduleTime: Type.Optional(Type.String({ format: "date-time" })),
      /** kobun writes it beside every status a reconcile writes; named here, or the CRD's schema would prune it. */
      observedGeneration: Type.Optional(Type.Integer()),
    }),
  },
});

export type CronJob = ObjectOf<typeof CronJobs>;
type JobObject = TargetObject<typeof resource.jobs>;

/** The annotation on each Job saying which scheduled run it is. */
export const SCHEDULED_AT = "batch.tutorial.kubebuilder.io/scheduled-at";
/** More missed runs than this means a wrong clock or a schedule far too tight for the deadline. */
const MAX_MISSED = 100;

export async function reconcileCronJob(ctx: ReconcileContext<CronJob>): Promise<ReconcileResult> {
  const { spec } = ctx;
  const now = handlerTime(); // kobun's clock, not `new Date()`: the test kit's virtual clock moves it
  const jobs = ctx.cache.list(resource.jobs).filter((job) => controllerOf(job) === ctx.uid);
  const active = jobs.filter((job) => !finishedAs(job));
  const scheduled = jobs.map(scheduledTimeOf).filter((t): t is Date => t !== undefined);
  const last = latest([...scheduled, ...(ctx.status.lastScheduleTime ? [new Date(ctx.status.lastScheduleTime)] : [])]);
  ctx.patch.status.active = active.map(referenceTo);
  if (last) ctx.patch.status.lastScheduleTime = rfc3339(last);

  await prune(ctx, jobs.filter((job) => finishedAs(job) === "Failed"), spec.failedJobsHistoryLimit);
  await prune(ctx, jobs.filter((job) => finishedAs(job) === "Complete"), spec.successfulJobsHistoryLimit);
  if (spec.suspend) return;

  const schedule = scheduleOf(spec.schedule);
  const earliest = last ?? new Date(ctx.meta.creationTimestamp!);
  const { missed, next } = runsDue(schedule, earliest, now, spec.startingDeadlineSeconds);
  const requeue = { requeueAfter: (next.getTime() - now.getTime()) / 1000 };
  if (!missed) return requeue;
  const deadline = spec.startingDeadlineSeconds;
  if (deadline !== undefined && missed.getTime() + deadline * 1000 < now.getTime()) {
    ctx.logger.info(`missed the start of the run at ${rfc3339(missed)}: past the starting deadline`);
    return requeue;
  }
  const policy = spec.concurrencyPolicy ?? "Allow";
  if (policy === "Forbid" && active.length > 0) {
    ctx.logger.info(`the run at ${rfc3339(missed)} waits: ${active.length} still active (concurrencyPolicy Forbid)`);
    return requeue;
  }
  if (policy === "Replace") for (const job of active) await deleteJob(ctx, job);
  const job = await ctx.api.create(jobFor(ctx.body, spec.jobTemplate, missed));
  ctx.logger.info(`created Job ${job.metadata.name} for the run at ${rfc3339(missed)}`);
  return requeue;
}

export const cronJobOptions: ReconcileOptions<CronJob> = { id: "cronjob", owns: [resource.jobs] };

on.reconcile(CronJobs, reconcileCronJob, cronJobOptions);

/**
 * The latest run due at or before `now` that has not been started (none if nothing is due), and
 * the next run after `now`. Runs before `startingDeadlineSeconds` ago are not counted.
 */
function runsDue(
  schedule: Schedule, earliest: Date, now: Date, deadline: number | undefined,
): { missed: Date | undefined; next: Date } {
  const from = deadline === undefined ? earliest : latest([earliest, new Date(now.getTime() - deadline * 1000)])!;
  let missed: Date | undefined;
  let count = 0;
  for (let t = schedule.next(from); t <= now; t = schedule.next(t)) {
    missed = t;
    if (++count > MAX_MISSED) {
      throw new PermanentError(
        `more than ${MAX_MISSED} missed start times: set or decrease spec.startingDeadlineSeconds, or check the clock`,
      );
    }
  }
  return { missed, next: schedule.next(now) };
}

/** The Job for the run at `at`: named after it, annotated with it, owned by the CronJob. */
function jobFor(cronJob: CronJob, template: JobTemplate, at: Date): JobObject {
  const job = {
    apiVersion: "batch/v1", kind: "Job",
    metadata: {
      name: `${cronJob.metadata.name}-${Math.floor(at.getTime() / 1000)}`,
      labels: { ...template.metadata?.labels },
      annotations: { ...template.metadata?.annotations, [SCHEDULED_AT]: rfc3339(at) },
    },
    spec: structuredClone(template.spec),
  };
  return adopt(job, { owner: cronJob, labels: false }) as JobObject; // the template's labels only (kube's CronJob)
}

/** Deletes the oldest of `finished` (by start time, unstarted first) beyond `limit`; no limit, no pruning. */
async function prune(ctx: ReconcileContext<CronJob>, finished: JobObject[], limit: number | undefined): Promise<void> {
  if (limit === undefined) return;
  const started = (job: JobObject) => (job.status?.startTime ? Date.parse(job.status.startTime) : -Infinity);
  const oldestFirst = [...finished].sort((a, b) => started(a) - started(b));
  for (const job of oldestFirst.slice(0, Math.max(0, oldestFirst.length - limit))) await deleteJob(ctx, job);
}

async function deleteJob(ctx: ReconcileContext<CronJob>, job: JobObject): Promise<void> {
  try {
    await ctx.api.delete("batch/v1/jobs", job.metadata.name!, { propagationPolicy: "Background" });
    ctx.logger.info(`deleted Job ${job.metadata.name}`);
  } catch (error) {
    if (!(error instanceof ApiError && error.code === 404)) throw error; // gone already: what we wanted
  }
}

function scheduleOf(text: string): Schedule {
  try {
    return parseSchedule(text);
  } catch (error) {
    throw new PermanentError((error as Error).message); // only a change of the schedule can help
  }
}

/** "Complete" or "Failed" once the Job controller says so; undefined while it runs. */
function finishedAs(job: JobObject): "Complete" | "Failed" | undefined {
  const done = job.status?.conditions?.find((c) => c.status === "True" && ["Complete", "Failed"].includes(c.type));
  return done?.type as "Complete" | "Failed" | undefined;
}

function controllerOf(job: JobObject): string | undefined {
  return job.metadata.ownerReferences?.find((ref) => ref.controller)?.uid as string | undefined;
}

function scheduledTimeOf(job: JobObject): Date | undefined {
  const text = job.metadata.annotations?.[SCHEDULED_AT];
  const at = text === undefined ? NaN : Date.parse(text);
  return Number.isNaN(at) ? undefined : new Date(at);
}

function referenceTo(job: JobObject) {
  const { name, namespace, uid } = job.metadata;
  return { apiVersion: "batch/v1", kind: "Job", name: name!, namespace: namespace!, uid: uid! };
}

function latest(times: Date[]): Date | undefined {
  return times.reduce<Date | undefined>((a, b) => (a === undefined || b > a ? b : a), undefined);
}

/** As Go's time.RFC3339 writes it: whole seconds, "Z". */
function rfc3339(t: Date): string {
  return t.toISOString().replace(/\.\d{3}Z$/, "Z");
}
