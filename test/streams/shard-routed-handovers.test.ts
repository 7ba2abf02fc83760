// Sharded, server-side, over many namespaces (one cluster-wide stream per resource, routed by
// namespace): every shard batch started is a stream of its own, and what routes it (its relist
// requests) ends with it. Handovers do not leave anything behind, however many there are.

import { afterAll, beforeAll, expect, spyOn, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { specOf } from "../../src/kube/lease-record.ts";
import type { Resource } from "../../src/kube/types.ts";
import { NamespaceCoverage } from "../../src/streams/coverage.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { testLogger } from "../peering/helpers.ts";
import { eventually } from "../runtime/helpers.ts";
import { releaseShardLease, takeShardLease } from "../runtime/shard-leases.ts";

const NAMESPACES: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const HANDOVERS = 6;
let sandbox: Sandbox;
let admin: KubeClient;
beforeAll(async () => {
  sandbox = await startSandbox({ shardSelectors: true });
  admin = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
});
afterAll(async () => {
  admin.close();
  await sandbox.stop();
});

test("cluster-wide routed streams of a sharded replica: each handover's batch stream takes its routing along when it ends (bounded, whatever the number of handovers)", async () => {
  const spaces = ["routed-a", "routed-b"];
  for (const name of spaces) await admin.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  const handled: string[] = [];
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ name }) => void handled.push(name!), { id: "record" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const coverages = spyOn(NamespaceCoverage.prototype, "add");
  const { logger, lines } = testLogger();
  const stop = new AbortController();
  const operator = run({
    signal: stop.signal, client, registry, logger, peerId: "routed",
    settings: resolveSettings({
      fileData: {
        sharding: { replicas: "auto", shards: 1 }, watching: { clusterWideAbove: 1 },
        peering: { name: "routed", freezeGracePeriod: "500ms", lease: { duration: "3s", renewDeadline: "2s", retryPeriod: "250ms" } }, workers: { batchWindow: 0 },
      },
      flags: { namespaces: spaces, standalone: true },
    }),
  });
  const shardLease = "kobun-routed-shard-0";
  const held = () => specOf(sandbox.store.objects("coordination.k8s.io", "leases", spaces[0]!).find((l) => l.metadata.name === shardLease) ?? { metadata: {} }).holderIdentity;
  try {
    await eventually(() => coverages.mock.contexts.length > 0, "the namespaces to be served");
    const coverage = coverages.mock.contexts[0] as NamespaceCoverage;
    coverages.mockRestore();
    const routing = () => (coverage as unknown as { relists: Set<unknown> }).relists.size;
    expect(coverage.clusterWide).toBe(true);
    for (let round = 0; round < HANDOVERS; round++) {
      await eventually(() => held() === "routed", `the shard held (round ${round})`);
      await admin.create(CONFIGMAPS, spaces[round % 2]!, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${round}` } });
      await eventually(() => handled.includes(`cm-${round}`), `cm-${round} handled`);
      // Another holder takes the shard (this replica stops it), then releases it (this replica takes it back: a new batch).
      const lost = lines.filter((l) => l.includes("lost a shard")).length;
      const taken = await takeShardLease(admin, spaces[0]!, shardLease, "thief");
      await eventually(() => lines.filter((l) => l.includes("lost a shard")).length > lost, `the shard lost (round ${round})`);
      await releaseShardLease(admin, taken);
    }
    await eventually(() => held() === "routed", "the shard held at the end");
    await admin.create(CONFIGMAPS, spaces[1]!, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm-last" } });
    await eventually(() => handled.includes("cm-last"), "cm-last handled");
    // One batch stream runs now: the routing of the ones before it ended with them.
    await eventually(() => routing() === 1, `the routing of ended streams let go (${routing()} kept after ${HANDOVERS} handovers)`, 2000);
  } finally {
    coverages.mockRestore();
    stop.abort();
    await operator;
    client.close();
  }
}, 20_000);
