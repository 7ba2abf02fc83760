// A test playing another replica on a shard Lease: it takes the Lease from its live holder (whose
// renewals keep changing it: a 409 means read it again and retry) and later releases it.

import type { KubeClient } from "../../src/kube/client.ts";
import { leaseResource, releasedLease, renewedLease } from "../../src/kube/lease-record.ts";
import type { KubeObject } from "../../src/kube/types.ts";

/** Writes the Lease to `holder` (for `durationMs`), retrying on conflicts; resolves with what was written. */
export async function takeShardLease(admin: KubeClient, namespace: string, name: string, holder: string, durationMs = 3000): Promise<KubeObject> {
  for (let attempt = 1; ; attempt++) {
    const lease = await admin.get(leaseResource, namespace, name);
    try {
      return await admin.replace(leaseResource, namespace, name, renewedLease(lease, holder, durationMs, Date.now()));
    } catch (error) {
      if ((error as { code?: unknown }).code !== 409 || attempt === 20) throw error;
    }
  }
}

/** Releases a Lease the test took (nobody else writes it meanwhile: its holder is the test). */
export function releaseShardLease(admin: KubeClient, taken: KubeObject): Promise<KubeObject> {
  return admin.replace(leaseResource, taken.metadata.namespace!, taken.metadata.name!, releasedLease(taken, Date.now()));
}
