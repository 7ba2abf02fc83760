// Shards taken together start together: a shard's hold starts only when the change is announced
// (after every PUT of the round answered). Started as its own PUT answered, its events were
// handled in the milliseconds before the streams replayed it, with the indexes lacking it.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { leaseResource, releasedLease } from "../../src/kube/lease-record.ts";
import { GROUP_LABEL, ShardLeases } from "../../src/sharding/leases.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";

let e: Env;
beforeEach(async () => { e = await env({ crds: [] }); });
afterEach(async () => { await e.stop(); });

test("the shards taken in one round are held only from the moment the change is announced", async () => {
  // Both shard Leases exist, free: taking them is an update each; the first one answers 400 ms late.
  for (const index of [0, 1]) {
    const lease = releasedLease({ apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: `op-shard-${index}`, namespace: "default", labels: { [GROUP_LABEL]: "op", "kobun.dev/shard-role": "shard" } }, spec: {} }, Date.now() - 60_000);
    await e.client.create(leaseResource, "default", lease);
  }
  e.sandbox.faults.stallNext(1, 400, { verb: "update", plural: "leases" });
  const { logger } = testLogger();
  let announced: number[] | undefined;
  const early: number[][] = [];
  const leases = new ShardLeases({
    client: e.client, namespace: "default", group: "op", shards: 2, id: "a", logger,
    durationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 5000, graceMs: 400, // no renewal within the test
    onChange: (owned) => void (announced ??= [...owned]),
  });
  const controller = new AbortController();
  const done = leases.run(controller.signal);
  // Sampled while the round's PUTs are in flight: held before announced is the window.
  const sampler = setInterval(() => { if (!announced && leases.owned.length > 0) early.push(leases.owned); }, 5);
  try {
    const deadline = Date.now() + 5000;
    while (!announced && Date.now() < deadline) await Bun.sleep(20);
    expect(announced).toEqual([0, 1]);
    expect(early).toEqual([]);
  } finally {
    clearInterval(sampler);
    controller.abort();
    await done;
  }
}, 10_000);
