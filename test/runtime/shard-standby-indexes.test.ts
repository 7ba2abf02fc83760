// A standby replica (every shard held by another, live) keeps indexes and waits quietly: no stream of
// it exists, so none holds the handlers up (nor is named every 10 s as "not listed"). Once it
// takes a shard, the hold applies again: its handlers wait for the first LIST of the indexed
// streams of that shard, even when that LIST is slow.

import { afterAll, expect, spyOn, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { Indexes } from "../../src/handling/indexes.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { leaseResource, releasedLease } from "../../src/kube/lease-record.ts";
import type { Resource } from "../../src/kube/types.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { memberLeaseName, objectHash, shardOf } from "../../src/sharding/index.ts";
import { testLogger } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";
import { heldLease } from "./shard-leases.ts";

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


async function standby(serverSide: boolean): Promise<void> {
  const sandbox = await startSandbox({ shardSelectors: serverSide });
  const admin = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  started.push({ sandbox, admin });
  const ns = `standby-${serverSide ? "server" : "client"}`;
  await admin.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  for (const name of ["s1", "s2", "s3"]) await admin.create(SECRETS, ns, { apiVersion: "v1", kind: "Secret", metadata: { name, labels: { owner: "app" } } });
  await admin.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "app" } });
  // Another replica, live, holds both shards: this one owns nothing (though below its share).
  await admin.create(leaseResource, ns, heldLease(ns, memberLeaseName(`kobun-${ns}`, "other"), "member", "other"));
  const shards = await Promise.all([0, 1].map((i) => admin.create(leaseResource, ns, heldLease(ns, `kobun-${ns}-shard-${i}`, "shard", "other"))));
  // Sharded by namespace: every object of the test is in this one shard.
  const shard = shards[shardOf(objectHash({ metadata: { namespace: ns } }, "namespace"), 2)]!;

  const registry = new Registry();
  registry.on.index("v1/secrets", ({ name, labels }) => (labels.owner ? { [labels.owner]: name } : undefined), { id: "secretsByOwner" });
  const seen: unknown[][] = [];
  registry.on.create("v1/configmaps", ({ indexes }) => void seen.push(indexes.secretsByOwner!.get("app")), { id: "read" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const streams = spyOn(Indexes.prototype, "stream");
  const stop = new AbortController();
  const { logger } = testLogger();
  const operator = run({
    signal: stop.signal, client, registry, logger, peerId: "standby",
    settings: resolveSettings({
      fileData: { sharding: { replicas: "auto", shards: 2, key: "namespace" }, peering: { name: ns, freezeGracePeriod: "500ms", lease: { duration: "3s", renewDeadline: "2s", retryPeriod: "250ms" } }, workers: { batchWindow: 0 } },
      flags: { namespaces: [ns] },
    }),
  });
  try {
    await eventually(() => streams.mock.contexts.length > 0, "the indexed streams to be laid out");
    const indexes = streams.mock.contexts[0] as Indexes;
    streams.mockRestore();
    const never = new AbortController().signal;
    // No shard, no stream: nothing for a handler to wait for (the indexes' warning stays silent).
    await eventually(() => indexes.primed(never) === undefined, "a standby to hold no handler up for the indexes", 2000);
    expect(seen).toEqual([]);

    // The shard is released to it: its secrets' first LIST answers late, and the handler waits for it.
    sandbox.faults.stallNext(1, 400, { verb: serverSide ? "list" : "watch", plural: "secrets" });
    sandbox.faults.stallNext(1, 400, { verb: serverSide ? "watch" : "list", plural: "secrets" });
    await admin.replace(leaseResource, ns, shard.metadata.name!, releasedLease(shard, Date.now()));
    await eventually(() => seen.length > 0, "the configmap handled once the shard is taken", 5000);
    expect(seen[0]).toEqual(["s1", "s2", "s3"]);
  } finally {
    streams.mockRestore();
    stop.abort();
    await operator;
    client.close();
  }
}

for (const serverSide of [true, false]) {
  test(`${serverSide ? "server" : "client"}-side sharding: a replica owning no shard holds no handler up for its indexes; once it takes one, its handlers wait for the indexes' first LIST`, () => standby(serverSide), 15_000);
}
