// SetDefaults_* of k8s.io/kubernetes/pkg/apis/core/v1 for a Pod and the PodSpec every workload's template carries;
// kept apart from defaults.ts so the workloads' defaults (defaults-workloads.ts) can share them.

import { canonicalResources } from "./quantity.ts";

export const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
export const dflt = (o: Record<string, any>, k: string, v: unknown) => {
  if (o[k] === undefined || o[k] === null) o[k] = v;
};
/** Go's `if x == 0 { x = v }`: a zero counts as unset */
export const dfltZero = (o: Record<string, any>, k: string, v: unknown) => { if (!o[k]) o[k] = v; };
export const each = (v: unknown, fn: (x: Record<string, any>) => void) => {
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

export function defaultPodSpec(spec: any): void {
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
export function defaultPod(pod: any): void {
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
