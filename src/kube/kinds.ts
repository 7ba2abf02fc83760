// Typed shapes of the built-in kinds that operators most often read and write as children,
// and the map from the selectors people write ("configmaps", "apps/v1/deployments") to them.
// ONE type per kind: `resource.jobs`'s objects, `ctx.api.get("batch/v1/jobs", …)`'s answer and
// kobun's exported `Job` are the same type (issue 35: they were two, and did not assign). They
// are @kubernetes/client-node's models as they come over the wire, imported as types only
// (nothing of that package is loaded at run time by this file). No behaviour here.

import type * as k8s from "@kubernetes/client-node";
import type { KubeObject, ObjectMeta } from "./types.ts";

/**
 * The client-node models as they come over the wire: timestamps are strings, not Dates (kobun
 * never deserialises into the model classes), and metadata is always there.
 */
export type Wire<T> = T extends Date ? string
  : T extends readonly (infer E)[] ? Wire<E>[]
  : T extends object ? { [K in keyof T]: Wire<T[K]> }
  : T;
/** A built-in kind's object: its wire model, with kobun's ObjectMeta (what handlers and `adopt` read and write). */
export type Builtin<T extends { metadata?: unknown }> = Omit<Wire<T>, "metadata"> & { metadata: ObjectMeta };

export type ConfigMap = Builtin<k8s.V1ConfigMap>;
/** A core/v1 Secret. Its values are never logged or copied into annotations or status by kobun. */
export type Secret = Builtin<k8s.V1Secret>;
export type Namespace = Builtin<k8s.V1Namespace>;
export type ServiceAccount = Builtin<k8s.V1ServiceAccount>;
/** A core/v1 Event, about its `involvedObject`. */
export type Event = Builtin<k8s.CoreV1Event>;
export type Pod = Builtin<k8s.V1Pod>;
export type Service = Builtin<k8s.V1Service>;
export type PersistentVolumeClaim = Builtin<k8s.V1PersistentVolumeClaim>;
export type Deployment = Builtin<k8s.V1Deployment>;
export type StatefulSet = Builtin<k8s.V1StatefulSet>;
export type DaemonSet = Builtin<k8s.V1DaemonSet>;
export type ReplicaSet = Builtin<k8s.V1ReplicaSet>;
export type Job = Builtin<k8s.V1Job>;
export type CronJob = Builtin<k8s.V1CronJob>;
export type Ingress = Builtin<k8s.V1Ingress>;
export type NetworkPolicy = Builtin<k8s.V1NetworkPolicy>;
export type PodDisruptionBudget = Builtin<k8s.V1PodDisruptionBudget>;
/** An autoscaling/v2 HorizontalPodAutoscaler (the version kube-apiserver serves first). */
export type HorizontalPodAutoscaler = Builtin<k8s.V2HorizontalPodAutoscaler>;
/** A coordination.k8s.io/v1 Lease (what peering and sharding hold). */
export type Lease = Builtin<k8s.V1Lease>;
export type CustomResourceDefinition = Builtin<k8s.V1CustomResourceDefinition>;

/** One entry of `status.conditions`, as metav1.Condition defines it. */
export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

interface ByPlural {
  configmaps: ConfigMap;
  secrets: Secret;
  namespaces: Namespace;
  serviceaccounts: ServiceAccount;
  events: Event;
  pods: Pod;
  services: Service;
  persistentvolumeclaims: PersistentVolumeClaim;
}

interface ByGroupPlural {
  "apps/v1/deployments": Deployment;
  "apps/v1/statefulsets": StatefulSet;
  "apps/v1/daemonsets": DaemonSet;
  "apps/v1/replicasets": ReplicaSet;
  "batch/v1/jobs": Job;
  "batch/v1/cronjobs": CronJob;
  "networking.k8s.io/v1/ingresses": Ingress;
  "networking.k8s.io/v1/networkpolicies": NetworkPolicy;
  "policy/v1/poddisruptionbudgets": PodDisruptionBudget;
  "autoscaling/v2/horizontalpodautoscalers": HorizontalPodAutoscaler;
  "coordination.k8s.io/v1/leases": Lease;
  "apiextensions.k8s.io/v1/customresourcedefinitions": CustomResourceDefinition;
}

/** The selectors with a known type: `configmaps`, `v1/configmaps`, `apps/v1/deployments`, `deployments.apps`... */
export type KnownKinds = ByPlural & { [P in keyof ByPlural as `v1/${P}`]: ByPlural[P] } & ByGroupPlural & {
  [K in keyof ByGroupPlural as K extends `${infer G}/${string}/${infer P}` ? `${P}.${G}` | P : never]: ByGroupPlural[K];
};

/** The object type of a selector: its built-in type when kobun knows it, KubeObject otherwise. */
export type KindOf<S> = S extends keyof KnownKinds ? KnownKinds[S] : KubeObject;
