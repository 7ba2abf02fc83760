// A shard taken over starts from the current state: what the replica that gave it up wrote (its
// handlers' results) is seen, so a handler that completed there does not run again. With the
// client-side filter the taker's stream of everything is one connection and its Lease watch
// another: the first may lag far behind the second on a loaded machine, and then what it holds
// of the shard's objects predates the old owner's writes. Here the ConfigMap watches stall from
// the moment the old owner's handler starts until the shard has been taken.

import { afterAll, expect, test } from "bun:test";
import { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { eventually } from "./helpers.ts";
import { completed, shardReplica, type ShardReplica, type Span } from "./shard-replicas.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const NAMESPACES: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
const SHARDS = 4;
let sandbox: Sandbox | undefined;
afterAll(async () => {
  await sandbox?.stop();
});

/** The shards each replica holds, from the Leases as the sandbox stores them. */
function heldShards(sb: Sandbox, ns: string): Map<string, number[]> {
  const held = new Map<string, number[]>();
  for (const lease of sb.store.objects("coordination.k8s.io", "leases", ns)) {
    const index = /-shard-(\d+)$/.exec(lease.metadata.name ?? "")?.[1];
    const holder = lease.spec?.holderIdentity;
    if (index !== undefined && holder) held.set(holder, [...(held.get(holder) ?? []), Number(index)]);
  }
  return held;
}

test("client-side filtering: a shard taken over while the taker's watch lags behind sees the old owner's results: its completed handler does not run again", async () => {
  const sb = (sandbox = await startSandbox({ shardSelectors: false }));
  const ns = "takeover-progress";
  const admin = await KubeClient.connect({ kubeconfig: sb.kubeconfigPath });
  await admin.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  const spans: Span[] = [];
  let armed = false;
  // The first run after arming stalls every ConfigMap watch: nobody hears of its result.
  const onStart = () => void (armed && ((armed = false), sb.faults.stallWatches(60_000, { plural: "configmaps" })));
  const replicas: ShardReplica[] = await Promise.all(["p-a", "p-b"].map((id) => shardReplica(sb, id, ns, spans, { ms: 5, shards: SHARDS, onStart })));
  try {
    await eventually(() => [...heldShards(sb, ns).values()].map((s) => s.length).join() === "2,2", "2/2 held");
    armed = true;
    const uid = (await admin.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } })).metadata.uid!;
    await eventually(async () => Boolean((await admin.get(CONFIGMAPS, ns, "x")).metadata.annotations?.["kobun.dev/last-handled-configuration"]), "x handled and its result written");
    const owner = replicas.find((r) => r.id === spans.find((s) => s.uid === uid)!.replica)!;
    const taker = replicas.find((r) => r !== owner)!;
    const given = heldShards(sb, ns).get(owner.id)!;
    const mark = taker.lines.length;
    await owner.stop(); // it hands its shards over (released once its work stopped)
    replicas.splice(replicas.indexOf(owner), 1);
    const acquired = (shard: number) => taker.lines.slice(mark).some((l) => l.includes("acquired a shard") && l.includes(` shard=${shard}`));
    await eventually(() => given.every(acquired), "the taker has the shards given up");
    sb.faults.stallWatches(0, { plural: "configmaps" }); // what was held back goes out now
    const marker = (await admin.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "marker" } })).metadata.uid!;
    await eventually(() => completed(spans).some((s) => s.uid === marker), "the marker handled (the taker's stream has caught up)");
    expect(spans.filter((s) => s.uid === uid).map((s) => s.replica)).toEqual([owner.id]);
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    admin.close();
  }
}, 20_000);
