// Seed 000 through the whole operator: two `run()` instances share a peering object; the
// lower-priority one freezes (its resource watch closes) while the higher one lives, and on
// resume it relists and handles what was created meanwhile. Also: a failing watch is reported
// unhealthy on /healthz and restarted, never silently dead.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

async function createConfigMap(name: string): Promise<void> {
  const response = await fetch(`${e.sandbox.url}/api/v1/namespaces/default/configmaps`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name } }),
  });
  expect(response.status).toBe(201);
}

/** A registry whose create handler on configmaps records names and wakes waiters. */
function recorder() {
  const registry = new Registry();
  const names: string[] = [];
  const waiters: { name: string; resolve(): void }[] = [];
  registry.on.create("v1/configmaps", ({ name }) => {
    names.push(name);
    for (const w of waiters.filter((w) => w.name === name)) w.resolve();
  }, { id: "record" });
  const handled = (name: string) =>
    names.includes(name) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ name, resolve }));
  return { registry, names, handled };
}

test("the lower-priority operator freezes (streams closed) and handles what was created meanwhile after resume", async () => {
  const low = recorder();
  const lowLog = testLogger();
  const lowStop = new AbortController();
  const lowRun = run({
    signal: lowStop.signal, client: e.client, registry: low.registry, logger: lowLog.logger,
    settings: resolveSettings({ flags: { namespaces: ["default"], priority: 0 } }), peerId: "low",
  });
  await createConfigMap("before");
  await low.handled("before");

  // The higher-priority peer watches something else (secrets), so the two never share objects.
  const high = new Registry();
  high.on.create("v1/secrets", () => {}, { id: "noop" });
  const highStop = new AbortController();
  const highRun = run({
    signal: highStop.signal, client: e.client, registry: high, logger: testLogger().logger,
    settings: resolveSettings({ flags: { namespaces: ["default"], priority: 10 } }), peerId: "high",
  });
  // The namespace's peering freezes the namespace's streams (the operator-wide toggle stays running).
  await eventually(() => lowLog.lines.some((l) => /freezing/i.test(l)), "the low operator to freeze");
  // Seed 000: the stream is closed, not ignored. Only peering watches and the high one's remain.
  const configmapWatches = () => e.sandbox.stats.log.filter((r) => r.verb === "watch" && r.path.endsWith("/configmaps")).length;
  const watchesAtFreeze = configmapWatches();
  await createConfigMap("during");
  expect(low.names).not.toContain("during");
  expect(configmapWatches()).toBe(watchesAtFreeze); // no new LIST/WATCH of configmaps while frozen

  highStop.abort();
  await highRun;
  await low.handled("during"); // resume → fresh relist → handled
  expect(lowLog.lines.filter((l) => /freezing/i.test(l))).toHaveLength(1);
  expect(lowLog.lines.filter((l) => /resuming/i.test(l))).toHaveLength(1);

  lowStop.abort();
  await lowRun;
  // Both removed their records on exit: nobody waits for a ghost.
  const peering = await e.client.get({ group: "kobun.dev", version: "v1", plural: "kobunpeerings", kind: "KobunPeering", namespaced: true, statusSubresource: false }, "default", "default");
  expect(Object.keys(peering.status ?? {})).toEqual([]);
}, 20_000);

test("a watch that fails is reported on /healthz and restarted with backoff", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "noop" });
  const stop = new AbortController();
  const log = testLogger();
  let health: import("../../src/observability/health.ts").Health | undefined;
  const running = run({
    signal: stop.signal, client: e.client, registry, logger: log.logger,
    settings: resolveSettings({ fileData: { watching: { backoff: { initial: "50ms", max: "100ms" } } }, flags: { namespaces: ["kube-system"], standalone: true } }),
    onStarted: (info) => (health = info.health),
  });
  await eventually(() => e.sandbox.stats.openWatches() > 0, "the configmap watch");
  e.sandbox.faults.sendError(500, "InternalError", "etcd is on fire");
  await eventually(() => health?.healthy === false, "the watch to be reported unhealthy");
  expect(health!.report().problems).toEqual({ "watch configmaps in kube-system": expect.stringContaining("etcd is on fire") });
  // Restarted: a fresh relist clears the problem.
  await eventually(() => health!.healthy, "the restarted watch to be healthy again");
  expect(log.lines.some((l) => /watching failed; restarting/.test(l))).toBe(true);
  stop.abort();
  await running;
}, 15_000);

test("the probe endpoint serves /healthz and /metrics while the operator runs, and stops with it", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "noop" });
  const stop = new AbortController();
  let probeUrl = "";
  const running = run({
    signal: stop.signal, client: e.client, registry, logger: testLogger().logger,
    settings: resolveSettings({ flags: { namespaces: ["default"], standalone: true, liveness: "http://127.0.0.1:0/healthz" } }),
    onStarted: (info) => (probeUrl = info.probeUrl ?? ""),
  });
  await eventually(() => probeUrl !== "", "the probe server");
  const healthz = await fetch(probeUrl);
  expect(healthz.status).toBe(200);
  expect(await healthz.json()).toEqual({ healthy: true, problems: {} });
  const metrics = await (await fetch(probeUrl.replace("/healthz", "/metrics"))).text();
  expect(metrics).toContain("kobun_healthy 1");
  stop.abort();
  await running;
  await expect(fetch(probeUrl)).rejects.toThrow();
}, 15_000);

test("lease mode: on shutdown the lease is released only after the holder's handlers finished", async () => {
  const leaseSettings = resolveSettings({
    fileData: { peering: { mode: "lease", name: "handover", freezeGracePeriod: "500ms", lease: { duration: "3s", renewDeadline: "2s", retryPeriod: "100ms" } }, shutdown: { gracePeriod: "5s" } },
    flags: { namespaces: ["default"] },
  });
  // The holder: a handler that takes 300 ms to wind down after its signal aborts.
  const holder = new Registry();
  let started!: () => void;
  const handlerStarted = new Promise<void>((resolve) => (started = resolve));
  let handlerEnded = 0;
  holder.on.create("v1/configmaps", async ({ signal }) => {
    started();
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    await Bun.sleep(300); // cleanup that must finish before anyone else touches the object
    handlerEnded = performance.now();
  }, { id: "slow", labels: { handover: "yes" } });
  const holderToggle = new Toggle();
  const holderStop = new AbortController();
  const holderLog = testLogger();
  const holderRun = run({ signal: holderStop.signal, client: e.client, registry: holder, toggle: holderToggle, logger: holderLog.logger, settings: leaseSettings, peerId: "holder" });
  // Not the toggle alone: it runs until the election starts (after the resources are resolved).
  await eventually(() => holderLog.lines.some((l) => l.includes("acquired the lease")), "the first replica to hold the lease");

  const standby = new Registry();
  standby.on.create("v1/secrets", () => {}, { id: "noop" });
  const standbyToggle = new Toggle();
  const standbyStop = new AbortController();
  const standbyRun = run({ signal: standbyStop.signal, client: e.client, registry: standby, toggle: standbyToggle, logger: testLogger().logger, settings: leaseSettings, peerId: "standby" });
  let standbyActive = 0;
  standbyToggle.onChange((frozen) => { if (!frozen && !standbyActive) standbyActive = performance.now(); });
  await eventually(() => standbyToggle.frozen, "the second replica to stand by");

  const response = await fetch(`${e.sandbox.url}/api/v1/namespaces/default/configmaps`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name: "handover", labels: { handover: "yes" } } }),
  });
  expect(response.status).toBe(201);
  await handlerStarted;
  holderStop.abort();
  await holderRun;
  await eventually(() => standbyActive > 0, "the standby to take over");
  expect(handlerEnded).toBeGreaterThan(0);
  expect(standbyActive).toBeGreaterThanOrEqual(handlerEnded);
  standbyStop.abort();
  await standbyRun;
}, 20_000);
