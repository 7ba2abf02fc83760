// kube-apiserver's defaulting (SetDefaults_* of k8s.io/kubernetes/pkg/apis/.../v1) for the built-in kinds
// served: Pods (defaults-pod.ts), the workloads and the pod templates they carry (defaults-workloads.ts),
// Services (and a Secret's type, a Namespace's label). It runs before the field manager, so defaulted fields
// belong to the writer (`kubectl-create` owns spec.template.spec.dnsPolicy, as on the real server). What the
// real server adds afterwards is owned by nobody: a Service's cluster IP, a Job's generated selector and
// labels, a workload's first status, and for a Pod the default admission plugins' priority and
// not-ready/unreachable tolerations (Priority, DefaultTolerationSeconds: on in every kube-apiserver, the test
// cluster's too) and its status.

import { defaultPod, dflt, dfltZero, isObj } from "./defaults-pod.ts";
import { allocateWorkload, defaultWorkload } from "./defaults-workloads.ts";
import { allocateKind, defaultKind } from "./defaults-kinds.ts";

function defaultService(svc: any): void {
  if (!isObj(svc.spec)) return;
  const spec = svc.spec;
  dflt(spec, "type", "ClusterIP");
  dflt(spec, "sessionAffinity", "None");
  if (spec.type !== "ExternalName") dflt(spec, "internalTrafficPolicy", "Cluster");
  if (spec.type === "NodePort" || spec.type === "LoadBalancer") dfltZero(spec, "externalTrafficPolicy", "Cluster");
  if (spec.type === "LoadBalancer") dflt(spec, "allocateLoadBalancerNodePorts", true);
  for (const p of Array.isArray(spec.ports) ? spec.ports : []) {
    if (!isObj(p)) continue;
    dflt(p, "protocol", "TCP");
    dflt(p, "targetPort", p.port);
  }
}

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

/** the defaults of `body`'s kind, in place */
export function applyDefaults(group: string, plural: string, body: any): void {
  if (defaultWorkload(group, plural, body) || defaultKind(group, plural, body)) return;
  if (group === "" && plural === "services") defaultService(body);
  else if (group === "" && plural === "pods") defaultPod(body);
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
  allocateWorkload(group, plural, body);
  allocateKind(group, plural, body);
  if (group === "" && plural === "pods") admitPod(body);
  if (group === "" && plural === "namespaces") namespaceFinalizer(body);
  if (group !== "" || plural !== "services" || !isObj(body.spec)) return;
  allocateService(body.spec, nextIP);
  dflt(body, "status", { loadBalancer: {} });
}

/**
 * the Service registry's allocations: a cluster IP (a headless one's "None" listed too: a selectorless one asks for
 * both families, as kube-apiserver does for it on any cluster), and a node port for each port of a NodePort or
 * LoadBalancer Service (random in 30000-32767, as there)
 */
function allocateService(spec: any, nextIP: () => string): void {
  if (spec.type !== "ExternalName" && spec.clusterIP === undefined) {
    spec.clusterIP = nextIP();
    spec.clusterIPs = [spec.clusterIP];
  }
  if (spec.clusterIP) {
    const dual = spec.clusterIP === "None" && !(isObj(spec.selector) && Object.keys(spec.selector).length);
    dflt(spec, "clusterIPs", [spec.clusterIP]);
    dflt(spec, "ipFamilyPolicy", dual ? "RequireDualStack" : "SingleStack");
    dflt(spec, "ipFamilies", dual ? ["IPv4", "IPv6"] : ["IPv4"]);
  }
  const nodePorts = spec.type === "NodePort" || (spec.type === "LoadBalancer" && spec.allocateLoadBalancerNodePorts);
  if (!nodePorts || !Array.isArray(spec.ports)) return;
  const taken = new Set(spec.ports.map((p: any) => p?.nodePort).filter(Boolean));
  for (const p of spec.ports) {
    if (!isObj(p) || p.nodePort) continue;
    let port: number;
    do port = 30000 + Math.floor(Math.random() * 2768); while (taken.has(port));
    taken.add((p.nodePort = port));
  }
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
