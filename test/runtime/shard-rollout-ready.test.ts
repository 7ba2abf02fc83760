// A replica waiting for replicas with another shard count to go (a rolling update that changes
// sharding.shards) is a standby for the rollout: /readyz answers 200 while it waits, even with the
// default probes.readiness (frozen-is-unready), or a RollingUpdate with maxUnavailable 0 would wait
// for it for ever. It owns nothing meanwhile, and takes the whole space once they are gone.

import { afterAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { leaseResource } from "../../src/kube/lease-record.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox } from "@kobun/sandbox";
import { memberLeaseName } from "../../src/sharding/index.ts";
import { testLogger } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";
import { heldLease } from "./shard-leases.ts";

const sandbox = await startSandbox();
const admin = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
/** Written by a replica with 4 shards (this one has 2). */
const FOUR = { "kobun.dev/shards": "4" };
afterAll(async () => {
  admin.close();
  await sandbox.stop();
});


test("a replica waiting for another shard count is ready, owns nothing, and takes every shard once they are gone", async () => {
  const ns = "default";
  await admin.create(leaseResource, ns, heldLease(ns, memberLeaseName(`kobun-${ns}`, "old"), "member", "old", FOUR));
  const old = await Promise.all([0, 1, 2, 3].map((i) => admin.create(leaseResource, ns, heldLease(ns, `kobun-${ns}-shard-${i}`, "shard", "old", FOUR))));
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "noop" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const stop = new AbortController();
  let probeUrl: string | undefined;
  const operator = run({
    signal: stop.signal, client, registry, logger: testLogger().logger, peerId: "new",
    settings: resolveSettings({
      fileData: { sharding: { replicas: "auto", shards: 2 }, peering: { name: ns, freezeGracePeriod: "500ms", lease: { duration: "3s", renewDeadline: "2s", retryPeriod: "250ms" } } },
      flags: { namespaces: [ns], liveness: "http://127.0.0.1:0/healthz" },
    }),
    onStarted: (info) => (probeUrl = info.probeUrl),
  });
  const readyz = async () => {
    const response = await fetch(probeUrl!.replace(/\/healthz$/, "/readyz"));
    return { status: response.status, body: (await response.json()) as { ready: boolean; frozen: Record<string, string> } };
  };
  try {
    await eventually(() => probeUrl !== undefined, "the probe server");
    await eventually(async () => Object.keys((await readyz()).body.frozen).includes("sharding-rollout"), "the replica to wait for the old shard count", 10_000);
    const waiting = await readyz();
    expect({ status: waiting.status, frozen: Object.keys(waiting.body.frozen) }).toEqual({ status: 200, frozen: ["sharding-rollout"] });
    expect(waiting.body.frozen["sharding-rollout"]).toContain("replicas with 4 shards (old)");

    for (const lease of old) await admin.delete(leaseResource, ns, lease.metadata.name!);
    await eventually(async () => Object.keys((await readyz()).body.frozen).length === 0, "the replica to take the space once the old count is gone", 10_000);
    await eventually(async () => (await readyz()).status === 200, "the replica ready once its streams listed", 10_000);
  } finally {
    stop.abort();
    await operator;
    client.close();
  }
}, 20_000);
