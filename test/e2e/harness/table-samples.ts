// A sample object of each built-in kind the sandbox serves, valid on kube-apiserver, with a
// status where the kind's table shows one: what tables.e2e.ts prints on both targets.

import type { KubeObject } from "../../../src/kube/types.ts";

export interface TableSample {
  /** the collection's path under the namespace (or the root, cluster-scoped), like "/apis/batch/v1/jobs" */
  api: string; plural: string; namespaced: boolean; body: KubeObject; status?: Record<string, unknown>;
  /** a second sample of a kind, in another state */
  variant?: string;
}

const labels = { app: "web" };
const container = { name: "main", image: "nginx:1.27", ports: [{ containerPort: 80 }] };
const template = { metadata: { labels }, spec: { containers: [container] } };

const NOW = "2026-01-02T03:04:05Z";

/** The samples, named `t-<plural>-<suffix>` (cluster-scoped ones must not meet another run's); `ns` for the namespaced. */
export function tableSamples(ns: string, suffix: string): TableSample[] {
  const sample = (api: string, plural: string, kind: string, namespaced: boolean, rest: Record<string, unknown>,
    status?: Record<string, unknown>, variant?: string): TableSample => {
    const apiVersion = api === "/api/v1" ? "v1" : api.replace(/^\/apis\//, "");
    const name = `t-${api.includes("events.k8s.io") ? "new" : ""}${plural}-${variant ? `${variant}-` : ""}${suffix}`;
    return { api, plural, namespaced, body: { apiVersion, kind, metadata: { name, labels }, ...rest } as KubeObject, ...(status ? { status } : {}), ...(variant ? { variant } : {}) };
  };

  const subject = [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "alice" }, { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "devs" }, { kind: "ServiceAccount", name: "robot", namespace: ns }];
  const webhook = { name: "w.e2e.kobun.dev", admissionReviewVersions: ["v1"], sideEffects: "None", clientConfig: { url: "https://127.0.0.1:1/x" }, rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] }] };
  return [
    sample("/api/v1", "configmaps", "ConfigMap", true, { data: { a: "1", b: "2" }, binaryData: { c: "AA==" } }),
    sample("/api/v1", "secrets", "Secret", true, { type: "Opaque", data: { a: "MQ==" } }),
    sample("/api/v1", "serviceaccounts", "ServiceAccount", true, {}),
    sample("/api/v1", "events", "Event", true, { involvedObject: { kind: "Pod", name: "p", namespace: ns, fieldPath: "spec.containers{main}" }, reason: "Started", message: "started", type: "Normal", source: { component: "kubelet" }, count: 3, firstTimestamp: NOW, lastTimestamp: NOW }),
    sample("/apis/events.k8s.io/v1", "events", "Event", true, { regarding: { kind: "Pod", name: "p", namespace: ns }, reason: "Pulled", note: "pulled", type: "Normal", action: "Pull", reportingController: "kubelet", reportingInstance: "node-1", eventTime: "2026-01-02T03:04:05.000000Z" }),
    sample("/api/v1", "pods", "Pod", true, { spec: { containers: [container, { name: "side", image: "busybox" }], nodeName: "node-1" } },
      { phase: "Running", podIP: "10.0.0.7", containerStatuses: [{ name: "main", ready: true, restartCount: 2, image: "nginx:1.27", imageID: "", started: true, state: { running: { startedAt: NOW } }, lastState: { terminated: { exitCode: 1, reason: "Error", startedAt: NOW, finishedAt: NOW } } }, { name: "side", ready: false, restartCount: 0, image: "busybox", imageID: "", state: { waiting: { reason: "CrashLoopBackOff" } } }] }),
    sample("/api/v1", "pods", "Pod", true, { spec: { initContainers: [{ name: "setup", image: "busybox" }], containers: [container], readinessGates: [{ conditionType: "example.com/ready" }] } },
      { phase: "Pending", initContainerStatuses: [{ name: "setup", ready: false, restartCount: 0, image: "busybox", imageID: "", state: { waiting: { reason: "PodInitializing" } } }], conditions: [{ type: "example.com/ready", status: "True" }] }, "init"),
    sample("/api/v1", "pods", "Pod", true, { spec: { containers: [container] } },
      { phase: "Running", containerStatuses: [{ name: "main", ready: false, restartCount: 0, image: "nginx:1.27", imageID: "", state: { terminated: { exitCode: 0, reason: "Completed", startedAt: NOW, finishedAt: NOW } } }] }, "done"),
    sample("/apis/batch/v1", "jobs", "Job", true, { spec: { parallelism: 3, template: { spec: { containers: [container], restartPolicy: "Never" } } } }, undefined, "parallel"),
    sample("/api/v1", "services", "Service", true, { spec: { selector: labels, ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }, { name: "dns", port: 53, protocol: "UDP" }] } }),
    sample("/api/v1", "replicationcontrollers", "ReplicationController", true, { spec: { replicas: 2, selector: labels, template } }, { replicas: 2, readyReplicas: 1 }),
    sample("/apis/apps/v1", "deployments", "Deployment", true, { spec: { replicas: 3, selector: { matchLabels: labels }, template } }, { replicas: 3, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1 }),
    sample("/apis/apps/v1", "replicasets", "ReplicaSet", true, { spec: { replicas: 2, selector: { matchLabels: labels }, template } }, { replicas: 2, readyReplicas: 1 }),
    sample("/apis/apps/v1", "daemonsets", "DaemonSet", true, { spec: { selector: { matchLabels: labels }, template: { ...template, spec: { ...template.spec, nodeSelector: { disk: "ssd" } } } } }, { currentNumberScheduled: 2, numberMisscheduled: 0, desiredNumberScheduled: 3, numberReady: 1, updatedNumberScheduled: 2, numberAvailable: 1 }),
    sample("/apis/apps/v1", "statefulsets", "StatefulSet", true, { spec: { replicas: 2, serviceName: "web", selector: { matchLabels: labels }, template } }, { replicas: 2, readyReplicas: 1, availableReplicas: 1 }),
    sample("/apis/batch/v1", "jobs", "Job", true, { spec: { completions: 2, parallelism: 1, template: { spec: { containers: [container], restartPolicy: "Never" } } } },
      { startTime: NOW, active: 1, ready: 0, succeeded: 1, terminating: 0, uncountedTerminatedPods: {} }),
    sample("/apis/batch/v1", "cronjobs", "CronJob", true, { spec: { schedule: "*/5 * * * *", timeZone: "Etc/UTC", jobTemplate: { spec: { template: { spec: { containers: [container], restartPolicy: "OnFailure" } } } } } },
      { lastScheduleTime: NOW, active: [{ apiVersion: "batch/v1", kind: "Job", name: "j-1", namespace: ns }] }),
    sample("/apis/autoscaling/v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, { spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" }, minReplicas: 1, maxReplicas: 5, metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } } }, { type: "Pods", pods: { metric: { name: "qps" }, target: { type: "AverageValue", averageValue: "10" } } }] } },
      { currentReplicas: 2, desiredReplicas: 2, currentMetrics: [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: 45, averageValue: "100m" } } }] }),
    sample("/api/v1", "persistentvolumeclaims", "PersistentVolumeClaim", true, { spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", volumeName: "pv-1", resources: { requests: { storage: "1Gi" } } } },
      { phase: "Bound", accessModes: ["ReadWriteMany", "ReadWriteOnce"], capacity: { storage: "2Gi" } }),
    sample("/apis/networking.k8s.io/v1", "ingresses", "Ingress", true, { spec: { ingressClassName: "nginx", tls: [{ hosts: ["a.example.com"] }], rules: ["a", "b", "c", "d"].map((h) => ({ host: `${h}.example.com` })) } },
      { loadBalancer: { ingress: [{ ip: "10.0.0.9" }, { hostname: "lb.example.com" }] } }),
    sample("/apis/policy/v1", "poddisruptionbudgets", "PodDisruptionBudget", true, { spec: { maxUnavailable: "25%", selector: { matchLabels: labels } } },
      { currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1, expectedPods: 3 }),
    sample("/apis/networking.k8s.io/v1", "networkpolicies", "NetworkPolicy", true, { spec: { podSelector: { matchLabels: labels, matchExpressions: [{ key: "tier", operator: "In", values: ["b", "a"] }] } } }),
    sample("/apis/coordination.k8s.io/v1", "leases", "Lease", true, { spec: { holderIdentity: "me", leaseDurationSeconds: 15 } }),
    sample("/apis/rbac.authorization.k8s.io/v1", "roles", "Role", true, { rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] }),
    sample("/apis/rbac.authorization.k8s.io/v1", "rolebindings", "RoleBinding", true, { roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "t-roles" }, subjects: subject }),
    sample("/apis/rbac.authorization.k8s.io/v1", "clusterroles", "ClusterRole", false, { rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] }),
    sample("/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings", "ClusterRoleBinding", false, { roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" }, subjects: subject }),
    sample("/apis/admissionregistration.k8s.io/v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false, { webhooks: [webhook] }),
    sample("/apis/admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false, { webhooks: [webhook, { ...webhook, name: "w2.e2e.kobun.dev" }] }),
    sample("/api/v1", "namespaces", "Namespace", false, {}),
    crd(suffix),
  ];
}

function crd(suffix: string): TableSample {
  const group = `t${suffix}.e2e.kobun.dev`;
  const schema = { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { size: { type: "integer" } } } } } };
  return {
    api: "/apis/apiextensions.k8s.io/v1", plural: "customresourcedefinitions", namespaced: false,
    body: { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: `widgets.${group}` }, spec: { group, scope: "Namespaced", names: { plural: "widgets", kind: "Widget" }, versions: [{ name: "v1", served: true, storage: true, schema }] } } as KubeObject,
  };
}
