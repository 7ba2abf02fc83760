// A handler that returns after its process stalled past the shard Lease's renewDeadline writes
// nothing: when the process wakes, the handler's continuation runs before the timer that loses
// the shard (due timers run in due order), and another replica may hold the shard by then.
// The cycle asks the clock before it writes; its results are discarded, the shard is taken
// again, and the object handled again from what is on the server (at least once, as promised).

import { afterAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { testLogger } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const NAMESPACES: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
const RENEW_DEADLINE_MS = 1000;
let sandbox: Sandbox | undefined;

/** The one replica of `ns`, its renewDeadline short, once it holds both shards. */
async function soleReplica(registry: Registry, ns: string) {
  const client = await KubeClient.connect({ kubeconfig: sandbox!.kubeconfigPath });
  const stop = new AbortController();
  const { logger, lines } = testLogger();
  const operator = run({
    signal: stop.signal, client, registry, logger, peerId: "only",
    settings: resolveSettings({
      fileData: { sharding: { replicas: "auto", shards: 2 }, peering: { name: ns, freezeGracePeriod: "500ms", lease: { duration: "3s", renewDeadline: `${RENEW_DEADLINE_MS}ms`, retryPeriod: "100ms" } }, workers: { batchWindow: 0 } },
      flags: { namespaces: [ns], standalone: true },
    }),
  });
  try {
    await eventually(() => lines.filter((l) => l.includes("acquired a shard")).length === 2, "both shards held");
  } catch (error) {
    stop.abort();
    await operator;
    client.close();
    throw error;
  }
  return { client, stop, lines, operator };
}
afterAll(async () => {
  await sandbox?.stop();
});

test("a handler that outlived its shard's renewDeadline in a stall of its process: its results are not written, the object is handled again", async () => {
  sandbox = await startSandbox();
  const ns = "stalled-write";
  const admin = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  await admin.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  const registry = new Registry();
  let runs = 0;
  registry.on.create("v1/configmaps", () => {
    if (runs++ > 0) return;
    // The whole process stalls (no timer, no socket): a loaded machine, a long synchronous task.
    const until = Date.now() + RENEW_DEADLINE_MS + 300;
    while (Date.now() < until) { /* stalled */ }
  }, { id: "stalls" });
  const { client, stop, lines, operator } = await soleReplica(registry, ns);
  try {
    await admin.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "stalls" } });
    const handled = async () => Boolean((await admin.get(CONFIGMAPS, ns, "stalls")).metadata.annotations?.["kobun.dev/last-handled-configuration"]);
    await eventually(handled, "the object handled and its result written", 10_000);
    expect(lines.some((l) => l.includes("results are not written") && l.includes("name=stalls"))).toBe(true);
    expect(runs).toBe(2);
    expect(lines.some((l) => l.includes("lost a shard") && l.includes("stalled"))).toBe(true);
  } finally {
    stop.abort();
    await operator;
    client.close();
    admin.close();
  }
}, 20_000);

test("a timer call that outlived its shard's renewDeadline in a stall of its process: its patch is not written, the timer runs on", async () => {
  sandbox ??= await startSandbox();
  const ns = "stalled-timer";
  const admin = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  await admin.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  const registry = new Registry();
  let calls = 0;
  registry.on.timer("v1/configmaps", ({ patch }) => {
    if (calls++ === 0) {
      const until = Date.now() + RENEW_DEADLINE_MS + 300;
      while (Date.now() < until) { /* stalled: no timer, no socket */ }
      patch.metadata = { annotations: { "test.kobun.dev/stalled-call": "written" } };
      return;
    }
    patch.metadata = { annotations: { "test.kobun.dev/later-call": "written" } };
  }, { id: "ticks", interval: 0.05, finalizer: false });
  const { client, stop, lines, operator } = await soleReplica(registry, ns);
  try {
    await admin.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "ticking" } });
    const annotations = async () => (await admin.get(CONFIGMAPS, ns, "ticking")).metadata.annotations ?? {};
    await eventually(async () => (await annotations())["test.kobun.dev/later-call"] === "written", "a later call's patch written", 15_000);
    expect(lines.some((l) => l.includes("lost a shard") && l.includes("stalled"))).toBe(true);
    expect((await annotations())["test.kobun.dev/stalled-call"]).toBeUndefined();
  } finally {
    stop.abort();
    await operator;
    client.close();
    admin.close();
  }
}, 25_000);
