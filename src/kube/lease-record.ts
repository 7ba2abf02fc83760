// The Lease record as client-go's leader election writes it, as pure functions: a fresh
// lease, a renewal (or takeover), a release, and resourceVersion ordering. Lease mode (peering/)
// and the shard Leases (sharding/) both write them.

import type { KubeObject, Resource } from "./types.ts";
import { compareResourceVersions } from "./versions.ts";

/** The coordination.k8s.io Lease resource. */
export const leaseResource: Resource = {
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  kind: "Lease",
  namespaced: true,
  statusSubresource: false,
};

export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  [key: string]: unknown;
}

export function specOf(lease: KubeObject): LeaseSpec {
  return (lease.spec ?? {}) as LeaseSpec;
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export function freshLease(name: string, namespace: string, id: string, durationMs: number, now: number): KubeObject {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name, namespace },
    spec: {
      holderIdentity: id, leaseDurationSeconds: Math.ceil(durationMs / 1000),
      acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0,
    },
  };
}

/**
 * Renewal by the holder, or takeover by `id` (a new acquireTime, one more transition). Keeps resourceVersion for
 * the PUT.
 */
export function renewedLease(lease: KubeObject, id: string, durationMs: number, now: number): KubeObject {
  const spec = specOf(lease);
  const ours = spec.holderIdentity === id;
  return {
    ...lease,
    spec: {
      ...spec,
      holderIdentity: id,
      leaseDurationSeconds: Math.ceil(durationMs / 1000),
      acquireTime: ours && spec.acquireTime ? spec.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: ours ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
    },
  };
}

/** client-go's release: no holder, a 1-second duration, so any standby may take it at once. */
export function releasedLease(lease: KubeObject, now: number): KubeObject {
  const { holderIdentity: _, ...spec } = specOf(lease);
  return {
    ...lease, spec: { ...spec, leaseDurationSeconds: 1, acquireTime: microTime(now), renewTime: microTime(now) },
  };
}

/** Is resourceVersion `a` newer than `b`? Ordered as kube/versions.ts justifies; without an order, assume yes. */
export function newer(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return true;
  return (compareResourceVersions(a, b) ?? 1) > 0;
}
