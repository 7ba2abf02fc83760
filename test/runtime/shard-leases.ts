// A test playing another replica on a shard Lease: it takes the Lease from its live holder (whose
// renewals keep changing it: a 409 means read it again and retry) and later releases it; and a
// sandbox with two namespaces in different shards, one to hand over.

import { resolveSettings } from "../../src/config/index.ts";
import type { Registry } from "../../src/declaring/index.ts";
import { KubeClient as Client } from "../../src/kube/client.ts";
import { freshLease, leaseResource, releasedLease, renewedLease, specOf } from "../../src/kube/lease-record.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { run } from "../../src/runtime/operator.ts";
import { GROUP_LABEL, objectHash, shardOf } from "../../src/sharding/index.ts";
import { testLogger } from "../peering/helpers.ts";

const NAMESPACES: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };

/** A Lease of the group `kobun-<ns>` held by another replica, `holder`, long enough that a test never sees it expire. */
export function heldLease(ns: string, name: string, role: "member" | "shard", holder: string, annotations?: Record<string, string>): KubeObject {
  const lease = freshLease(name, ns, holder, 60_000, Date.now());
  return { ...lease, metadata: { ...lease.metadata, labels: { [GROUP_LABEL]: `kobun-${ns}`, "kobun.dev/shard-role": role }, ...(annotations ? { annotations } : {}) } };
}

/** Writes the Lease to `holder` (for `durationMs`), retrying on conflicts; resolves with what was written. */
export async function takeShardLease(admin: Client, namespace: string, name: string, holder: string, durationMs = 3000): Promise<KubeObject> {
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
export function releaseShardLease(admin: Client, taken: KubeObject): Promise<KubeObject> {
  return admin.replace(leaseResource, taken.metadata.namespace!, taken.metadata.name!, releasedLease(taken, Date.now()));
}

/** A sandbox (applying shardSelector or not) and two namespaces in different shards of 2 by namespace: `home`, and `away` to hand over. */
export async function twoShardSandbox(serverSide: boolean, home: string): Promise<{ sandbox: Sandbox; admin: Client; away: string; shardLease: string; holder(): string | null | undefined; stop(): Promise<void> }> {
  const sandbox = await startSandbox({ shardSelectors: serverSide });
  const admin = await Client.connect({ kubeconfig: sandbox.kubeconfigPath });
  const shardOfNs = (name: string) => shardOf(objectHash({ metadata: { namespace: name } }, "namespace"), 2);
  let n = 0;
  while (shardOfNs(`${home}-${n}`) === shardOfNs(home)) n++;
  const away = `${home}-${n}`;
  for (const name of [home, away]) await admin.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  // The operator's peering.name is `home`: its Leases are named after it, in `home`.
  const shardLease = `kobun-${home}-shard-${shardOfNs(away)}`;
  const holder = () => specOf(sandbox.store.objects("coordination.k8s.io", "leases", home).find((l) => l.metadata.name === shardLease) ?? { metadata: {} }).holderIdentity;
  return { sandbox, admin, away, shardLease, holder, stop: async () => (admin.close(), await sandbox.stop()) };
}

/**
 * The operator under test as replica "keeper" of twoShardSandbox's group: 2 shards by namespace,
 * Leases on short timings, peering named `home` (standalone unless `peering`: then one peering
 * per namespace served). `stop` ends it and closes its client.
 */
export async function runKeeper(sandbox: Sandbox, registry: Registry, home: string, namespaces: string[], peering = false): Promise<{ lines: string[]; stop(): Promise<void> }> {
  const client = await Client.connect({ kubeconfig: sandbox.kubeconfigPath });
  const stop = new AbortController();
  const { logger, lines } = testLogger();
  const operator = run({
    signal: stop.signal, client, registry, logger, peerId: "keeper",
    settings: resolveSettings({
      fileData: { sharding: { replicas: "auto", shards: 2, key: "namespace" }, peering: { name: home, freezeGracePeriod: "500ms", lease: { duration: "3s", renewDeadline: "2s", retryPeriod: "250ms" } }, workers: { batchWindow: 0 } },
      flags: { namespaces, ...(peering ? {} : { standalone: true }) },
    }),
  });
  return {
    lines,
    stop: async () => {
      stop.abort();
      await operator;
      client.close();
    },
  };
}
