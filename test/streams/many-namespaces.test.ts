// Issue 11, defect 1: more namespaces than Bun's fetch has request slots (256 per process).
// Every object in every matched namespace must be handled and its PATCH must land, with and
// without per-namespace peering; the streams stay within the connection budget.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { streamBudget } from "../../src/kube/budget.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { freezeManually, resumeManually } from "../../src/peering/index.ts";
import { installCRDs, testLogger } from "../peering/helpers.ts";
import { eventually } from "../runtime/helpers.ts";

let sandbox: Sandbox;
let client: KubeClient;
beforeEach(async () => {
  sandbox = await startSandbox();
  client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
});
afterEach(async () => {
  client.close();
  await sandbox.stop();
});

async function post(path: string, body: unknown): Promise<void> {
  const response = await fetch(`${sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
}

/** Creates `count` namespaces `ns-N`, each with one ConfigMap, a few requests at a time. */
async function populate(count: number): Promise<void> {
  const names = Array.from({ length: count }, (_, i) => `ns-${i}`);
  for (let i = 0; i < names.length; i += 25) {
    await Promise.all(names.slice(i, i + 25).map(async (ns) => {
      await post("/api/v1/namespaces", { metadata: { name: ns } });
      await post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: "cm" } });
    }));
  }
  await post("/api/v1/namespaces", { metadata: { name: "other" } });
  await post("/api/v1/namespaces/other/configmaps", { metadata: { name: "cm" } });
}

/** Every ConfigMap `cm` of ns-0..ns-(count-1) labelled by the handler's PATCH, on the server. */
function landed(count: number): number {
  let n = 0;
  for (let i = 0; i < count; i++) if (sandbox.store.get("", "configmaps", `ns-${i}`, "cm")?.metadata?.labels?.handled === "yes") n++;
  return n;
}

/** Runs the operator on `ns-*` until every object's PATCH has landed; returns figures. */
async function handleAll(count: number, peering: boolean, timeoutMs: number) {
  if (peering) await installCRDs(client, "kobun.dev");
  await populate(count);
  const registry = new Registry();
  const handled = new Set<string>();
  registry.on.create("v1/configmaps", ({ namespace, patch }) => {
    patch.metadata.labels = { handled: "yes" };
    handled.add(namespace!);
  }, { id: "label" });
  const settings = resolveSettings({ flags: { namespaces: ["ns-*"], ...(peering ? {} : { standalone: true }) } });
  const log = testLogger();
  const stop = new AbortController();
  const started = performance.now();
  const running = run({ signal: stop.signal, settings, client, registry, logger: log.logger });
  let maxStreams = 0;
  let starved = 0;
  const off = streamBudget.onChange(({ open, waiting }) => {
    maxStreams = Math.max(maxStreams, open);
    starved = Math.max(starved, waiting);
  });
  try {
    // The server's store has no event to await: poll it, bounded, every 100 ms.
    for (const deadline = Date.now() + timeoutMs; landed(count) < count; await Bun.sleep(100)) {
      if (Date.now() > deadline) throw new Error(`only ${landed(count)} of ${count} PATCHes landed within ${timeoutMs} ms; open watches ${sandbox.stats.openWatches()}`);
    }
  } finally {
    stop.abort();
    await running;
    off();
  }
  const ms = Math.round(performance.now() - started);
  expect(handled.has("other")).toBe(false);
  expect(sandbox.store.get("", "configmaps", "other", "cm")?.metadata?.labels?.handled).toBeUndefined();
  expect(maxStreams).toBeLessThanOrEqual(streamBudget.limit);
  expect(starved).toBe(0);
  // With peering, each namespace's operator really joined its own peering object.
  if (peering) expect(sandbox.store.objects("kobun.dev", "kobunpeerings").length).toBe(count);
  expect(streamBudget.open).toBe(0);
  // The server learns of closed sockets a moment later.
  await eventually(() => sandbox.stats.openWatches() === 0, "the server to see every watch closed");
  // The figures of issue 11 (read them with `bun test ... | grep namespaces=`).
  console.log(`namespaces=${count} peering=${peering} handled-all-ms=${ms} streams-open-max=${maxStreams} stream-budget=${streamBudget.limit} fetch-slots=${streamBudget.slots}`);
  return log.lines;
}

test("300 namespaces by glob: every object is handled and every PATCH lands", async () => {
  await handleAll(300, false, 60_000);
}, 90_000);

test("1,000 namespaces by glob, standalone: every object is handled by one cluster-wide watch", async () => {
  const lines = await handleAll(1000, false, 120_000);
  expect(lines.filter((l) => /one cluster-wide watch per resource/.test(l))).toHaveLength(1);
}, 180_000);

test("1,000 namespaces by glob with a peering per namespace: every object is handled, peering watched once", async () => {
  const lines = await handleAll(1000, true, 120_000);
  expect(lines.filter((l) => /one cluster-wide watch per resource/.test(l))).toHaveLength(1);
}, 180_000);

test("one cluster-wide watch: a namespace frozen by its own peering is not handled, and is handled after it resumes", async () => {
  await installCRDs(client, "kobun.dev");
  for (const ns of ["a", "b"]) await post("/api/v1/namespaces", { metadata: { name: ns } });
  const frozenBy = await freezeManually({ client, name: "default", namespace: "a", group: "kobun.dev", lifetime: 600 });
  const { registry, handled, handledOnce } = recorder();
  const settings = resolveSettings({ fileData: { watching: { clusterWideAbove: 1 } }, flags: { namespaces: ["a", "b"] } });
  const log = testLogger();
  const stop = new AbortController();
  const running = run({ signal: stop.signal, settings, client, registry, logger: log.logger });
  try {
    await eventually(() => log.lines.some((l) => /freezing: a peer with a higher priority/.test(l) && /namespace=a|\/a\//.test(l)), "namespace a to freeze", 10_000);
    await post("/api/v1/namespaces/b/configmaps", { metadata: { name: "first" } });
    await handledOnce("b/first");
    await post("/api/v1/namespaces/a/configmaps", { metadata: { name: "while-frozen" } });
    await post("/api/v1/namespaces/b/configmaps", { metadata: { name: "after" } });
    // One stream delivers in order: once b/after is handled, a/while-frozen was seen and held back.
    await handledOnce("b/after");
    expect(handled).not.toContain("a/while-frozen");
    await resumeManually({ client, name: "default", namespace: "a", group: "kobun.dev", id: frozenBy });
    await handledOnce("a/while-frozen");
  } finally {
    stop.abort();
    await running;
  }
  expect(log.lines.filter((l) => /one cluster-wide watch per resource/.test(l))).toHaveLength(1);
  expect(handled.filter((k) => k === "a/while-frozen")).toHaveLength(1);
}, 30_000);

/** A registry recording `namespace/name` of every ConfigMap created, with a wait for one of them. */
function recorder() {
  const registry = new Registry();
  const handled: string[] = [];
  const waiters = new Map<string, () => void>();
  registry.on.create("v1/configmaps", ({ namespace, name }) => {
    handled.push(`${namespace}/${name}`);
    waiters.get(`${namespace}/${name}`)?.();
  }, { id: "record" });
  const handledOnce = (key: string) => new Promise<void>((resolve) => (handled.includes(key) ? resolve() : waiters.set(key, resolve)));
  return { registry, handled, handledOnce };
}

test("a glob that grows past the threshold while running switches to one cluster-wide watch, exclusions still apply", async () => {
  const { registry, handled, handledOnce } = recorder();
  const settings = resolveSettings({ fileData: { watching: { clusterWideAbove: 2 } }, flags: { namespaces: ["g-*", "!g-skip"], standalone: true } });
  const log = testLogger();
  const stop = new AbortController();
  const running = run({ signal: stop.signal, settings, client, registry, logger: log.logger });
  try {
    for (const ns of ["g-1", "g-2"]) {
      await post("/api/v1/namespaces", { metadata: { name: ns } });
      await post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: "cm" } });
      await handledOnce(`${ns}/cm`);
    }
    expect(log.lines.some((l) => /one cluster-wide watch per resource/.test(l))).toBe(false);
    for (const ns of ["g-3", "g-skip", "g-4"]) {
      await post("/api/v1/namespaces", { metadata: { name: ns } });
      await post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: "cm" } });
    }
    await handledOnce("g-3/cm");
    await handledOnce("g-4/cm");
    // A namespace served before the switch now gets its new objects through the cluster-wide watch.
    await post("/api/v1/namespaces/g-1/configmaps", { metadata: { name: "after-switch" } });
    await handledOnce("g-1/after-switch");
  } finally {
    stop.abort();
    await running;
  }
  expect(log.lines.filter((l) => /one cluster-wide watch per resource/.test(l))).toHaveLength(1);
  expect(handled.sort()).toEqual(["g-1/after-switch", "g-1/cm", "g-2/cm", "g-3/cm", "g-4/cm"]);
}, 30_000);
