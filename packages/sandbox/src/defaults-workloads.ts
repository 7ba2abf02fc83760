// SetDefaults_* of k8s.io/kubernetes/pkg/apis/{apps,batch,autoscaling,core}/v… for the workload kinds: their own
// fields and the PodSpec of the template each carries (a CronJob's inside its jobTemplate), and the statuses they
// are created with. `kubectl create job|cronjob|deployment -o yaml` and a DaemonSet or StatefulSet read back show
// them, as an operator's diff of desired against live state does.

import { defaultPodSpec, dflt, dfltZero, each, isObj } from "./defaults-pod.ts";

function defaultDeployment(spec: any): void {
  dflt(spec, "replicas", 1);
  dflt(spec, "strategy", {});
  dflt(spec.strategy, "type", "RollingUpdate");
  if (spec.strategy.type === "RollingUpdate") {
    dflt(spec.strategy, "rollingUpdate", {});
    dflt(spec.strategy.rollingUpdate, "maxUnavailable", "25%");
    dflt(spec.strategy.rollingUpdate, "maxSurge", "25%");
  }
  dflt(spec, "revisionHistoryLimit", 10);
  dflt(spec, "progressDeadlineSeconds", 600);
}

function defaultDaemonSet(spec: any): void {
  dflt(spec, "updateStrategy", {});
  dflt(spec.updateStrategy, "type", "RollingUpdate");
  if (spec.updateStrategy.type === "RollingUpdate") {
    dflt(spec.updateStrategy, "rollingUpdate", {});
    dflt(spec.updateStrategy.rollingUpdate, "maxUnavailable", 1);
    dflt(spec.updateStrategy.rollingUpdate, "maxSurge", 0);
  }
  dflt(spec, "revisionHistoryLimit", 10);
}

/** with the MaxUnavailableStatefulSet and StatefulSetAutoDeletePVC gates on, as in v1.37 */
function defaultStatefulSet(spec: any): void {
  dflt(spec, "podManagementPolicy", "OrderedReady");
  dflt(spec, "updateStrategy", {});
  if (!spec.updateStrategy.type) {
    spec.updateStrategy.type = "RollingUpdate";
    dflt(spec.updateStrategy, "rollingUpdate", {});
  }
  const rolling = spec.updateStrategy.rollingUpdate;
  if (spec.updateStrategy.type === "RollingUpdate" && isObj(rolling)) {
    dflt(rolling, "partition", 0);
    dflt(rolling, "maxUnavailable", 1);
  }
  dflt(spec, "persistentVolumeClaimRetentionPolicy", {});
  dflt(spec.persistentVolumeClaimRetentionPolicy, "whenDeleted", "Retain");
  dflt(spec.persistentVolumeClaimRetentionPolicy, "whenScaled", "Retain");
  dflt(spec, "replicas", 1);
  dflt(spec, "revisionHistoryLimit", 10);
}

/** a ReplicationController's selector and labels are its template's when it names none */
function defaultReplicationController(rc: any): void {
  const labels = rc.spec.template?.metadata?.labels;
  if (isObj(labels) && Object.keys(labels).length) {
    if (!isObj(rc.spec.selector) || !Object.keys(rc.spec.selector).length) rc.spec.selector = { ...labels };
    rc.metadata ??= {};
    if (!isObj(rc.metadata.labels) || !Object.keys(rc.metadata.labels).length) rc.metadata.labels = { ...labels };
  }
  dflt(rc.spec, "replicas", 1);
}

/** SetDefaults_Job; its labels are its template's when it has none (also on every read, after the selector) */
function defaultJob(job: any): void {
  const spec = job.spec;
  if (spec.completions == null && spec.parallelism == null) spec.completions = 1;
  dflt(spec, "parallelism", 1);
  dflt(spec, "backoffLimit", spec.backoffLimitPerIndex == null ? 6 : 2147483647);
  jobLabels(job);
  dflt(spec, "completionMode", "NonIndexed");
  dflt(spec, "suspend", false);
  each(spec.podFailurePolicy?.rules, (rule) => each(rule.onPodConditions, (p) => dfltZero(p, "status", "True")));
  dflt(spec, "podReplacementPolicy", isObj(spec.podFailurePolicy) ? "Failed" : "TerminatingOrFailed");
  dflt(spec, "manualSelector", false);
}

function jobLabels(job: any): void {
  const labels = job.spec.template?.metadata?.labels;
  if (!isObj(labels)) return;
  job.metadata ??= {};
  if (!isObj(job.metadata.labels) || !Object.keys(job.metadata.labels).length) job.metadata.labels = { ...labels };
}

function defaultCronJob(spec: any): void {
  dflt(spec, "concurrencyPolicy", "Allow");
  dflt(spec, "suspend", false);
  dflt(spec, "successfulJobsHistoryLimit", 3);
  dflt(spec, "failedJobsHistoryLimit", 1);
  defaultPodSpec(spec.jobTemplate?.spec?.template?.spec);
}

/** autoscaling/v2: one replica at least, scaled on 80% CPU when no metric is named */
function defaultHPA(spec: any): void {
  dflt(spec, "minReplicas", 1);
  if (!Array.isArray(spec.metrics) || !spec.metrics.length) {
    const target = { type: "Utilization", averageUtilization: 80 };
    spec.metrics = [{ type: "Resource", resource: { name: "cpu", target } }];
  }
}

const WORKLOADS: Record<string, (body: any) => void> = {
  "apps/deployments": (d) => defaultDeployment(d.spec),
  "apps/daemonsets": (d) => defaultDaemonSet(d.spec),
  "apps/statefulsets": (d) => defaultStatefulSet(d.spec),
  "apps/replicasets": (d) => dflt(d.spec, "replicas", 1),
  "/replicationcontrollers": defaultReplicationController,
  "batch/jobs": defaultJob,
  "batch/cronjobs": (d) => defaultCronJob(d.spec),
  "autoscaling/horizontalpodautoscalers": (d) => defaultHPA(d.spec),
};

/** the defaults of a workload kind, in place; false when `plural` is none */
export function defaultWorkload(group: string, plural: string, body: any): boolean {
  const fn = WORKLOADS[`${group}/${plural}`];
  if (!fn) return false;
  if (!isObj(body.spec)) return true;
  fn(body);
  if (plural !== "cronjobs" && plural !== "horizontalpodautoscalers") defaultPodSpec(body.spec.template?.spec);
  return true;
}

/** the Job strategy's generateSelector: pods of this Job, and only of it, by its uid */
function jobSelector(job: any): void {
  const uid = job.metadata?.uid;
  if (!isObj(job.spec) || job.spec.manualSelector === true || !uid) return;
  const name = job.metadata.name;
  const own = { "batch.kubernetes.io/controller-uid": uid };
  dflt(job.spec, "selector", { matchLabels: own });
  dflt(job.spec, "template", {});
  dflt(job.spec.template, "metadata", {});
  job.spec.template.metadata.labels = {
    ...job.spec.template.metadata.labels, ...own, "batch.kubernetes.io/job-name": name, "controller-uid": uid,
    "job-name": name,
  };
}

/** a new object's status: its Go struct's fields that are not omitempty, at their zero values */
const NEW_STATUS: Record<string, object> = {
  "apps/deployments": {},
  "apps/daemonsets": { currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 },
  "apps/statefulsets": { availableReplicas: 0, replicas: 0 },
  "apps/replicasets": { replicas: 0 },
  "/replicationcontrollers": { replicas: 0 },
  "batch/jobs": {},
  "batch/cronjobs": {},
  "autoscaling/horizontalpodautoscalers": { currentMetrics: null, desiredReplicas: 0 },
};

/** what a created workload gets after the field manager (owned by nobody): a Job's selector, the new status */
export function allocateWorkload(group: string, plural: string, body: any): void {
  const status = NEW_STATUS[`${group}/${plural}`];
  if (!status) return;
  if (plural === "jobs") {
    jobSelector(body);
    // what the real server's read of the stored Job defaults: labels of the template it generated
    if (isObj(body.spec)) jobLabels(body);
  }
  dflt(body, "status", { ...status });
}
