// Typed shapes of the built-in kinds that operators most often read and write as children,
// and the map from the selectors people write ("configmaps", "apps/v1/deployments") to them.
// Only the fields an operator commonly touches are spelled out; the rest stays open, as in
// KubeObject. No behaviour here.

import type { KubeObject, ObjectMeta } from "./types.ts";

/** A core/v1 ConfigMap: `data` holds strings, `binaryData` base64. */
export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  immutable?: boolean;
}

/** A core/v1 Secret. Its values are never logged or copied into annotations or status by kobun. */
export interface Secret extends KubeObject {
  type?: string;
  /** Base64-encoded values. */
  data?: Record<string, string>;
  /** Plain values, written only (the server folds them into `data`). */
  stringData?: Record<string, string>;
  immutable?: boolean;
}

/** A core/v1 Namespace. */
export interface Namespace extends KubeObject {
  status?: { phase?: "Active" | "Terminating"; [key: string]: any };
}

/** A core/v1 ServiceAccount. */
export interface ServiceAccount extends KubeObject {
  secrets?: { name?: string }[];
  automountServiceAccountToken?: boolean;
}

/** A core/v1 Event, about its `involvedObject`. */
export interface Event extends KubeObject {
  involvedObject: { apiVersion?: string; kind?: string; name?: string; namespace?: string; uid?: string };
  reason?: string;
  message?: string;
  type?: "Normal" | "Warning";
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
}

export interface PodTemplate {
  metadata?: ObjectMeta;
  spec: { containers: { name: string; image?: string; [key: string]: any }[]; [key: string]: any };
}

/** A core/v1 Pod: the fields operators commonly read; the rest stays open. */
export interface Pod extends KubeObject {
  spec?: PodTemplate["spec"];
  status?: { phase?: string; conditions?: Condition[]; [key: string]: any };
}

/** A core/v1 Service. */
export interface Service extends KubeObject {
  spec?: {
    selector?: Record<string, string>;
    ports?: { port: number; targetPort?: number | string; name?: string; protocol?: string }[];
    type?: string;
    [key: string]: any;
  };
}

/** An apps/v1 Deployment. */
export interface Deployment extends KubeObject {
  spec?: {
    replicas?: number; selector: { matchLabels?: Record<string, string>; [key: string]: any }; template: PodTemplate;
    [key: string]: any;
  };
  status?: {
    replicas?: number; readyReplicas?: number; availableReplicas?: number; observedGeneration?: number;
    conditions?: Condition[]; [key: string]: any;
  };
}

/** An apps/v1 StatefulSet. */
export interface StatefulSet extends KubeObject {
  spec?: {
    replicas?: number; serviceName?: string; selector: { matchLabels?: Record<string, string>; [key: string]: any };
    template: PodTemplate; [key: string]: any;
  };
}

/** A batch/v1 Job. */
export interface Job extends KubeObject {
  spec?: { template: PodTemplate; backoffLimit?: number; [key: string]: any };
  status?: { succeeded?: number; failed?: number; active?: number; conditions?: Condition[]; [key: string]: any };
}

/** A coordination.k8s.io/v1 Lease (what peering and sharding hold). */
export interface Lease extends KubeObject {
  spec?: {
    holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string;
    leaseTransitions?: number;
  };
}

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
}

interface ByGroupPlural {
  "apps/v1/deployments": Deployment;
  "apps/v1/statefulsets": StatefulSet;
  "batch/v1/jobs": Job;
  "coordination.k8s.io/v1/leases": Lease;
}

/** The selectors with a known type: `configmaps`, `v1/configmaps`, `apps/v1/deployments`, `deployments.apps`... */
export type KnownKinds = ByPlural & { [P in keyof ByPlural as `v1/${P}`]: ByPlural[P] } & ByGroupPlural & {
  [K in keyof ByGroupPlural as K extends `${infer G}/${string}/${infer P}` ? `${P}.${G}` | P : never]: ByGroupPlural[K];
};

/** The object type of a selector: its built-in type when kobun knows it, KubeObject otherwise. */
export type KindOf<S> = S extends keyof KnownKinds ? KnownKinds[S] : KubeObject;
