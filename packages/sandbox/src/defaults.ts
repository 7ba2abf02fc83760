// kube-apiserver's defaulting (SetDefaults_* of k8s.io/kubernetes/pkg/apis/.../v1) for the
// built-in kinds the kubectl suite creates: Pods, Deployments (and the pod template they carry),
// Services and CronJobs (and a Secret's type). It runs before the field manager, so defaulted fields belong to the
// writer (`kubectl-create` owns spec.template.spec.dnsPolicy, as on the real server). What the
// real server adds afterwards is owned by nobody: a Service's cluster IP, a Job's generated
// selector, and for a Pod the default admission plugins' priority and not-ready/unreachable
// tolerations (Priority, DefaultTolerationSeconds: on in every kube-apiserver, the test cluster's
// too) and its status.

import { canonicalResources } from "./quantity.ts";

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
const dflt = (o: Record<string, any>, k: string, v: unknown) => { if (o[k] === undefined || o[k] === null) o[k] = v; };
/** Go's `if x == 0 { x = v }`: a zero counts as unset */
const dfltZero = (o: Record<string, any>, k: string, v: unknown) => { if (!o[k]) o[k] = v; };
const each = (v: unknown, fn: (x: Record<string, any>) => void) => {
  for (const x of Array.isArray(v) ? v : []) if (isObj(x)) fn(x);
};

/** `:latest` or no tag (and no digest) is pulled always (SetDefaults_Container, parsers.ParseImageName) */
function pullPolicy(image: unknown): string {
  const [ref = "", digest] = typeof image === "string" ? image.split("@") : [""];
  const tag = ref.lastIndexOf(":") > ref.lastIndexOf("/") ? ref.slice(ref.lastIndexOf(":") + 1) : "";
  return tag === "latest" || (!tag && !digest) ? "Always" : "IfNotPresent";
}

function defaultHandler(h: unknown): void {
  if (!isObj(h) || !isObj(h.httpGet)) return;
  dflt(h.httpGet, "path", "/");
  dflt(h.httpGet, "scheme", "HTTP");
}

function defaultProbe(p: unknown): void {
  if (!isObj(p)) return;
  dfltZero(p, "timeoutSeconds", 1);
  dfltZero(p, "periodSeconds", 10);
  dfltZero(p, "successThreshold", 1);
  dfltZero(p, "failureThreshold", 3);
  defaultHandler(p);
}

function defaultContainer(c: Record<string, any>): void {
  dflt(c, "terminationMessagePath", "/dev/termination-log");
  dflt(c, "terminationMessagePolicy", "File");
  dflt(c, "imagePullPolicy", pullPolicy(c.image));
  dflt(c, "resources", {});
  canonicalResources(c.resources?.requests);
  canonicalResources(c.resources?.limits);
  each(c.ports, (p) => dflt(p, "protocol", "TCP"));
  each(c.env, (e) => { if (isObj(e.valueFrom?.fieldRef)) dflt(e.valueFrom.fieldRef, "apiVersion", "v1"); });
  for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"]) defaultProbe(c[probe]);
  if (isObj(c.lifecycle)) { defaultHandler(c.lifecycle.postStart); defaultHandler(c.lifecycle.preStop); }
}

/** SetDefaults_Volume and the volume sources' own (mode 0644, hostPath's unset type) */
function defaultVolume(v: Record<string, any>): void {
  if (!Object.keys(v).some((k) => k !== "name")) v.emptyDir = {};
  for (const k of ["secret", "configMap", "downwardAPI", "projected"]) if (isObj(v[k])) dflt(v[k], "defaultMode", 420);
  if (isObj(v.hostPath)) dflt(v.hostPath, "type", "");
  const fieldRefs = (items: unknown) => each(items, (i) => {
    if (isObj(i.fieldRef)) dflt(i.fieldRef, "apiVersion", "v1");
  });
  fieldRefs(v.downwardAPI?.items);
  each(v.projected?.sources, (s) => {
    if (isObj(s.serviceAccountToken)) dflt(s.serviceAccountToken, "expirationSeconds", 3600);
    fieldRefs(s.downwardAPI?.items);
  });
}

function defaultPodSpec(spec: any): void {
  if (!isObj(spec)) return;
  if (spec.serviceAccountName) spec.serviceAccount = spec.serviceAccountName;
  else if (spec.serviceAccount) spec.serviceAccountName = spec.serviceAccount;
  dflt(spec, "dnsPolicy", "ClusterFirst");
  dflt(spec, "restartPolicy", "Always");
  dflt(spec, "terminationGracePeriodSeconds", 30);
  dflt(spec, "securityContext", {});
  dflt(spec, "schedulerName", "default-scheduler");
  for (const list of ["containers", "initContainers", "ephemeralContainers"]) each(spec[list], defaultContainer);
  each(spec.volumes, defaultVolume);
}

/** SetDefaults_Pod: what a Pod gets beyond its PodSpec's defaults (a template does not) */
function defaultPod(pod: any): void {
  if (!isObj(pod.spec)) return;
  defaultPodSpec(pod.spec);
  const grace = pod.spec.terminationGracePeriodSeconds;
  if (typeof grace === "number" && grace < 0) pod.spec.terminationGracePeriodSeconds = 1;
  dflt(pod.spec, "enableServiceLinks", true);
  // requests default to limits, per container
  for (const list of ["containers", "initContainers"]) each(pod.spec[list], (c) => {
    if (!isObj(c.resources?.limits)) return;
    c.resources.requests = { ...c.resources.limits, ...(c.resources.requests ?? {}) };
  });
  for (const list of [pod.spec.overhead, pod.spec.resources?.requests, pod.spec.resources?.limits]) {
    canonicalResources(list);
  }
}

function defaultDeployment(d: any): void {
  if (!isObj(d.spec)) return;
  const spec = d.spec;
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
  if (isObj(spec.template)) defaultPodSpec(spec.template.spec);
}

function defaultService(svc: any): void {
  if (!isObj(svc.spec)) return;
  const spec = svc.spec;
  dflt(spec, "type", "ClusterIP");
  dflt(spec, "sessionAffinity", "None");
  if (spec.type !== "ExternalName") dflt(spec, "internalTrafficPolicy", "Cluster");
  for (const p of Array.isArray(spec.ports) ? spec.ports : []) {
    if (!isObj(p)) continue;
    dflt(p, "protocol", "TCP");
    dflt(p, "targetPort", p.port);
  }
}

/** SetDefaults_CronJob */
function defaultCronJob(cj: any): void {
  if (!isObj(cj.spec)) return;
  dflt(cj.spec, "concurrencyPolicy", "Allow");
  dflt(cj.spec, "suspend", false);
  dflt(cj.spec, "successfulJobsHistoryLimit", 3);
  dflt(cj.spec, "failedJobsHistoryLimit", 1);
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

/** the defaults of `body`'s kind, in place */
/**
 * A []byte map's values as Go writes them back: decoded (typed-decode.ts refused what does not) and encoded again,
 * so a value broken over lines is stored whole
 */
function canonicalBytes(map: unknown): void {
  if (!isObj(map)) return;
  for (const [key, value] of Object.entries(map)) {
    if (typeof value === "string" && /[\r\n]/.test(value)) map[key] = Buffer.from(value, "base64").toString("base64");
  }
}

export function applyDefaults(group: string, plural: string, body: any): void {
  if (group === "apps" && plural === "deployments") defaultDeployment(body);
  else if (group === "" && plural === "services") defaultService(body);
  else if (group === "" && plural === "pods") defaultPod(body);
  else if (group === "batch" && plural === "cronjobs") defaultCronJob(body);
  // SetDefaults_Secret, on every write (an update that drops the type gets it back); `kubectl get secrets` shows it
  else if (group === "" && plural === "secrets") {
    dfltZero(body, "type", "Opaque");
    canonicalBytes(body.data);
  } else if (group === "" && plural === "configmaps") canonicalBytes(body.binaryData);
  // SetDefaults_Namespace, on every write: the label of its name
  else if (group === "" && plural === "namespaces" && body.metadata?.name) {
    body.metadata.labels = { ...(isObj(body.metadata.labels) ? body.metadata.labels : {}),
      "kubernetes.io/metadata.name": body.metadata.name };
  }
}

/**
 * what a created object gets after the field manager: a Service's cluster IP, a Pod's admission and status, empty
 * statuses
 */
export function allocate(group: string, plural: string, body: any, nextIP: () => string): void {
  if (group === "apps" && plural === "deployments") dflt(body, "status", {});
  if (group === "" && plural === "pods") admitPod(body);
  if (group === "batch" && plural === "jobs") jobSelector(body);
  if (group === "" && plural === "namespaces") namespaceFinalizer(body);
  if (group !== "" || plural !== "services" || !isObj(body.spec)) return;
  const spec = body.spec;
  if (spec.type !== "ExternalName" && spec.clusterIP === undefined) {
    spec.clusterIP = nextIP();
    spec.clusterIPs = [spec.clusterIP];
  }
  if (spec.clusterIP && spec.clusterIP !== "None") {
    dflt(spec, "clusterIPs", [spec.clusterIP]);
    dflt(spec, "ipFamilies", ["IPv4"]);
    dflt(spec, "ipFamilyPolicy", "SingleStack");
  }
  dflt(body, "status", { loadBalancer: {} });
}

const NO_EXECUTE = ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"];

/** the Priority and DefaultTolerationSeconds admission plugins, and the status a new Pod starts with */
function admitPod(pod: any): void {
  if (!isObj(pod.spec)) return;
  const spec = pod.spec;
  // no PriorityClass objects are served: a Pod without one gets the default priority
  if (!spec.priorityClassName) dflt(spec, "priority", 0);
  dflt(spec, "preemptionPolicy", "PreemptLowerPriority");
  const tolerations: any[] = Array.isArray(spec.tolerations) ? spec.tolerations : [];
  for (const key of NO_EXECUTE) {
    const tolerated = tolerations.some(
      (t) => isObj(t) && (t.key === key || !t.key) && (!t.effect || t.effect === "NoExecute"),
    );
    if (!tolerated) tolerations.push({ effect: "NoExecute", key, operator: "Exists", tolerationSeconds: 300 });
  }
  spec.tolerations = tolerations;
  pod.status = { phase: "Pending", qosClass: qosClass(spec) };
}

/** a CPU or memory quantity as a number, to compare requests with limits */
function quantity(q: unknown): number {
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(String(q ?? ""));
  if (!m) return Number.NaN;
  const scale: Record<string, number> = {
    "": 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4,
  };
  return Number(m[1]) * (scale[m[2]!] ?? Number.NaN);
}

/**
 * pkg/apis/core/helper/qos: BestEffort without CPU or memory requests and limits, Guaranteed when every container's
 * limits equal its requests for both
 */
function qosClass(spec: Record<string, any>): string {
  const containers = [...(spec.containers ?? []), ...(spec.initContainers ?? [])].filter(isObj);
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const requests = c.resources?.requests ?? {};
    const limits = c.resources?.limits ?? {};
    for (const r of ["cpu", "memory"]) {
      if (quantity(requests[r]) > 0 || quantity(limits[r]) > 0) any = true;
      if (limits[r] === undefined || quantity(requests[r] ?? limits[r]) !== quantity(limits[r])) guaranteed = false;
    }
  }
  return !any ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable";
}

/** the namespace strategy's PrepareForCreate: the namespace controller's spec finalizer, whatever else is asked */
function namespaceFinalizer(body: any): void {
  if (!isObj(body.spec)) body.spec = {};
  const finalizers: unknown[] = Array.isArray(body.spec.finalizers) ? body.spec.finalizers : [];
  if (!finalizers.includes("kubernetes")) body.spec.finalizers = [...finalizers, "kubernetes"];
}
