// A shard given up (the other one kept) takes its objects out of the replica's indexes: while another replica owns it,
// this one hears none of its events (deletions included), so what it kept would go stale; and
// when it takes the shard back, it starts from the current state (the fresh LIST, or the live
// stream's shelf of the store), not from that plus the objects deleted meanwhile; its handlers wait
// for the indexed streams of the shard taken to have that state, as at start-up.

import { afterAll, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/index.ts";
import type { Index } from "../../src/declaring/indexes.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { specOf } from "../../src/kube/lease-record.ts";
import type { Resource } from "../../src/kube/types.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { objectHash, shardOf } from "../../src/sharding/index.ts";
import { eventually } from "./helpers.ts";
import { releaseShardLease, runKeeper, takeShardLease } from "./shard-leases.ts";

const NAMESPACES: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
const SECRETS: Resource = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true, statusSubresource: false };
const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const started: { sandbox: Sandbox; admin: KubeClient }[] = [];
afterAll(async () => {
  for (const { sandbox, admin } of started) {
    admin.close();
    await sandbox.stop();
  }
});

async function handOverAndBack(serverSide: boolean): Promise<void> {
  const sandbox = await startSandbox({ shardSelectors: serverSide });
  const admin = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  started.push({ sandbox, admin });
  // Sharded by namespace over 2 shards: `home` stays this replica's throughout, `away` is handed over and back.
  const ns = `index-handover-${serverSide ? "server" : "client"}`;
  const shardOfNs = (name: string) => shardOf(objectHash({ metadata: { namespace: name } }, "namespace"), 2);
  let n = 0;
  while (shardOfNs(`${ns}-${n}`) === shardOfNs(ns)) n++;
  const away = `${ns}-${n}`;
  for (const name of [ns, away]) await admin.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  const secret = (name: string) => admin.create(SECRETS, away, { apiVersion: "v1", kind: "Secret", metadata: { name, labels: { owner: "app" } } });
  await secret("ghost");
  await secret("kept");

  const registry = new Registry();
  registry.on.index("v1/secrets", ({ name, labels }) => (labels.owner ? { [labels.owner]: name } : undefined), { id: "secretsByOwner" });
  let live: Readonly<Record<string, Index>> | undefined;
  const seen = new Map<string, string>();
  registry.on.create("v1/configmaps", ({ name, indexes }) => {
    live = indexes;
    seen.set(name!, [...indexes.secretsByOwner!.get("app")].sort().join());
  }, { id: "read" });
  const keeper = await runKeeper(sandbox, registry, ns, [ns, away]);
  const { lines } = keeper;
  const shardLease = `kobun-${ns}-shard-${shardOfNs(away)}`;
  const holder = () => specOf(sandbox.store.objects("coordination.k8s.io", "leases", ns).find((l) => l.metadata.name === shardLease) ?? { metadata: {} }).holderIdentity;
  const indexed = () => [...(live?.secretsByOwner?.get("app") ?? [])].sort().join();
  try {
    await admin.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "reader" } });
    await eventually(() => holder() === "keeper" && lines.filter((l) => l.includes("acquired a shard")).length === 2, "both shards held");
    await eventually(() => indexed() === "ghost,kept", "both secrets indexed");
    // Another replica takes the shard; meanwhile one secret goes and one comes; then the shard comes back.
    const taken = await takeShardLease(admin, ns, shardLease, "thief");
    await eventually(() => lines.some((l) => l.includes("lost a shard")), "the shard lost");
    expect(indexed()).toBe(""); // none of its objects is this replica's to know now
    await admin.delete(SECRETS, away, "ghost");
    await secret("new");
    await admin.create(CONFIGMAPS, away, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "late" } });
    // Taken back, the secrets' fresh state answers late (server-side): the handlers wait for it.
    sandbox.faults.stallNext(1, 400, { verb: "watch", plural: "secrets" });
    await releaseShardLease(admin, taken);
    await eventually(() => holder() === "keeper", "the shard taken back");
    await eventually(() => seen.has("late"), "the configmap of the shard taken back handled");
    expect(seen.get("late")).toBe("kept,new");
    expect(indexed()).toBe("kept,new");
  } finally {
    await keeper.stop();
  }
}

for (const serverSide of [true, false]) {
  test(`${serverSide ? "server" : "client"}-side sharding: a shard given up leaves the indexes; taken back, they hold what exists now (not the objects deleted meanwhile) before its handlers run`, () => handOverAndBack(serverSide), 15_000);
}
