// A sharded replica's stop is a shutdown first, a handover after (docs/production.md, "Shutdown"):
// its running handlers get `shutdown.gracePeriod`, not the handover's `peering.freezeGracePeriod`,
// what they return within it is written as an unsharded operator's would be, and only then are its
// shards' Leases released, so the replica that takes them over never runs an object still handled
// here. The shard Leases keep being renewed meanwhile (renewDeadline here is shorter than the wait).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { run } from "../../src/runtime/operator.ts";
import { Logger, memorySink } from "../../src/util/log.ts";
import { configmaps as CONFIGMAPS, env, type Env } from "../peering/helpers.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

const shardLeases = () => e.sandbox.store.objects("coordination.k8s.io", "leases", "default")
  .filter((lease) => lease.metadata.labels?.["kobun.dev/shard-role"] === "shard");

test("stopping a sharded replica mid-handler: the handler gets shutdown.gracePeriod, its result is written, then the shards are released", async () => {
  const client = await KubeClient.connect({ kubeconfig: e.sandbox.kubeconfigPath });
  const registry = new Registry();
  const started = Promise.withResolvers<void>();
  let endedAt = 0;
  registry.on.create("v1/configmaps", async ({ signal, patch }) => {
    started.resolve();
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    // Winding down after the stop takes longer than the handover's grace, well within the shutdown's.
    await Bun.sleep(1200);
    patch.metadata.annotations = { "test.kobun.dev/wound-down": "yes" };
    endedAt = performance.now();
  }, { id: "slow-stop" });
  const settings = resolveSettings({
    fileData: {
      sharding: { replicas: "auto", shards: 2 },
      peering: { freezeGracePeriod: "300ms", lease: { duration: "2s", renewDeadline: "1s", retryPeriod: "200ms" } },
      shutdown: { gracePeriod: "4s" },
      workers: { batchWindow: 0 },
    },
    flags: { namespaces: ["default"] },
  });
  const stop = new AbortController();
  const sink = memorySink("debug");
  const running = run({ signal: stop.signal, client, registry, logger: new Logger(sink), settings, peerId: "only" });
  try {
    await e.client.create(CONFIGMAPS, "default", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "winding" } });
    await Promise.race([started.promise, Bun.sleep(10_000).then(() => { throw new Error(`the handler never started:\n${sink.lines.join("\n")}`); })]);
  } finally {
    stop.abort();
  }
  const report = await running;
  client.close();
  const stoppedAt = performance.now();

  expect(report.abandoned).toEqual([]);
  expect(endedAt).toBeGreaterThan(0);
  const written = e.sandbox.store.get("", "configmaps", "default", "winding");
  expect(written?.metadata.annotations?.["test.kobun.dev/wound-down"]).toBe("yes");
  expect(sink.lines.filter((l) => / WARN .*abandon/.test(l)).join("\n")).toBe("");
  // Released at the end, after the handler ended: no holder left on any shard's Lease.
  expect(shardLeases().length).toBe(2);
  for (const lease of shardLeases()) expect(lease.spec?.holderIdentity ?? null).toBeNull();
  expect(stoppedAt).toBeGreaterThan(endedAt);
}, 30_000);
