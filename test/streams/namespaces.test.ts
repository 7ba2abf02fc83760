// Namespace globs at run time: `team-*` with `!team-secret` follows namespaces as they come
// and go (Kopf's semantics); objects elsewhere are never handled.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { resolveSettings } from "../../src/config/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { memorySink, Logger } from "../../src/util/log.ts";
import { eventually } from "../runtime/helpers.ts";

let sandbox: Sandbox;
beforeAll(async () => (sandbox = await startSandbox()));
afterAll(() => sandbox.stop());

async function post(path: string, body: unknown): Promise<void> {
  const response = await fetch(`${sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(response.status).toBe(201);
}

test("globs follow namespaces that appear after start; exclusions and other namespaces are ignored", async () => {
  const registry = new Registry();
  const handled: string[] = [];
  let wake: (() => void) | undefined;
  registry.on.create("v1/configmaps", ({ namespace, name }) => {
    handled.push(`${namespace}/${name}`);
    wake?.();
  }, { id: "record" });
  const seen = (key: string) => new Promise<void>((resolve) => {
    if (handled.includes(key)) return resolve();
    const previous = wake;
    wake = () => { previous?.(); if (handled.includes(key)) resolve(); };
  });

  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const settings = resolveSettings({ flags: { namespaces: ["team-*", "!team-secret"], standalone: true } });
  const stop = new AbortController();
  const sink = memorySink("info");
  const running = run({ signal: stop.signal, settings, client, registry, logger: new Logger(sink) });
  try {
    for (const ns of ["team-a", "team-secret", "other"]) await post("/api/v1/namespaces", { metadata: { name: ns } });
    await post("/api/v1/namespaces/other/configmaps", { metadata: { name: "outside" } });
    await post("/api/v1/namespaces/team-secret/configmaps", { metadata: { name: "excluded" } });
    await post("/api/v1/namespaces/team-a/configmaps", { metadata: { name: "inside" } });
    await seen("team-a/inside");
    // A namespace created later is discovered and served too.
    await post("/api/v1/namespaces", { metadata: { name: "team-b" } });
    await post("/api/v1/namespaces/team-b/configmaps", { metadata: { name: "later" } });
    await seen("team-b/later");
    expect(handled.sort()).toEqual(["team-a/inside", "team-b/later"]);
    expect(sink.lines.some((l) => /namespace found; serving it namespace=team-b/.test(l))).toBe(true);
  } finally {
    stop.abort();
    await running;
  }
  expect(sandbox.stats.openWatches()).toBe(0);
}, 15_000);

test("the namespace watch restarts after a failure, so namespaces created later are still served", async () => {
  const registry = new Registry();
  const handled: string[] = [];
  registry.on.create("v1/configmaps", ({ namespace, name }) => void handled.push(`${namespace}/${name}`), { id: "record" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const settings = resolveSettings({ fileData: { watching: { backoff: { initial: "50ms", max: "100ms" } } }, flags: { namespaces: ["ops-*"], standalone: true } });
  const stop = new AbortController();
  const sink = memorySink("info");
  const running = run({ signal: stop.signal, settings, client, registry, logger: new Logger(sink) });
  try {
    await eventually(() => sandbox.stats.openWatches() > 0, "the namespace watch");
    sandbox.faults.sendError(500, "InternalError", "etcd is on fire"); // fails every open watch
    await eventually(() => sink.lines.some((l) => /watching namespaces failed; restarting/.test(l)), "the failure");
    await post("/api/v1/namespaces", { metadata: { name: "ops-late" } });
    await post("/api/v1/namespaces/ops-late/configmaps", { metadata: { name: "after-failure" } });
    await eventually(() => handled.includes("ops-late/after-failure"), "the configmap in the namespace created after the failure");
  } finally {
    stop.abort();
    await running;
  }
}, 15_000);

// A fixed list honours exclusions like a glob does: `-n a -n b -n '!b'` serves only a.
test("a fixed namespace list minus an exclusion never opens a stream in the excluded namespace", async () => {
  for (const ns of ["fixed-a", "fixed-b"]) await post("/api/v1/namespaces", { metadata: { name: ns } });
  const registry = new Registry();
  const handled = Promise.withResolvers<string>();
  registry.on.create("v1/configmaps", ({ namespace, name }) => handled.resolve(`${namespace}/${name}`), { id: "record" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const settings = resolveSettings({ flags: { namespaces: ["fixed-a", "fixed-b", "!fixed-b"], standalone: true } });
  const stop = new AbortController();
  const running = run({ signal: stop.signal, settings, client, registry, logger: new Logger(memorySink("info")) });
  try {
    await post("/api/v1/namespaces/fixed-a/configmaps", { metadata: { name: "inside" } });
    expect(await handled.promise).toBe("fixed-a/inside");
    // Both namespaces' streams would have been started together, before any object was handled.
    expect(sandbox.stats.log.filter((r) => r.path.includes("/namespaces/fixed-b/")).map((r) => `${r.verb} ${r.path}`)).toEqual([]);
    expect(sandbox.stats.log.some((r) => r.verb === "watch" && r.path.includes("/namespaces/fixed-a/configmaps"))).toBe(true);
  } finally {
    stop.abort();
    await running;
    client.close();
  }
  expect(sandbox.stats.openWatches()).toBe(0);
}, 15_000);
