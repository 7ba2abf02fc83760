// kobun.yaml's `resources:` at start-up: a key naming no registered resource stops run()
// before anything starts (file, line, did-you-mean, the registered ones); `enabled: false`
// leaves a resource unwatched (and says so of an index kept from it, which then stays empty).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { ConfigError, parseConfigText, resolveSettings } from "../../src/config/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { resourceName, type Resource } from "../../src/kube/types.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { memorySink, Logger } from "../../src/util/log.ts";

let sandbox: Sandbox;
beforeAll(async () => (sandbox = await startSandbox()));
afterAll(() => sandbox.stop());

function settingsFrom(text: string) {
  return resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(`peering: { standalone: true }\n${text}`, "kobun.yaml") });
}

function twoResources(): Registry {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "cm" });
  registry.on.create("secrets", () => {}, { id: "secret" });
  return registry;
}

test("a resource key no handler registers is a config error naming the file, the line, a near key and the registered ones", async () => {
  const settings = settingsFrom("resources:\n  secrets: {}\n  configmap: { labelSelector: a=b }\n  widgets.example.com: {}");
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  let started = false;
  try {
    const error = await run({ settings, client, registry: twoResources(), logger: new Logger(memorySink("error")), onStarted: () => (started = true) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.map((issue) => issue.line)).toEqual([
      'kobun.yaml:4: resources.configmap: no handler registers this resource; did you mean "v1/configmaps"? (registered: v1/configmaps, secrets)' +
        "; a kind, singular or short name is known only for a resource whose CRD kobun knows (defineResource, or a CRD file beside the handlers)",
      "kobun.yaml:5: resources.widgets.example.com: no handler registers this resource (registered: v1/configmaps, secrets)",
    ]);
    expect(started).toBe(false);
  } finally {
    client.close();
  }
});

test("enabled: false leaves the resource unwatched; the others start", async () => {
  const settings = settingsFrom("resources:\n  secrets: { enabled: false }");
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const stop = new AbortController();
  const { promise: startedWith, resolve } = Promise.withResolvers<Resource[]>();
  const running = run({ signal: stop.signal, settings, client, registry: twoResources(), logger: new Logger(memorySink("error")), onStarted: (info) => resolve(info.resources) });
  try {
    expect((await startedWith).map(resourceName)).toEqual(["configmaps"]);
  } finally {
    stop.abort();
    await running;
    client.close();
  }
}, 15_000);

test("an index kept from a resource with enabled: false is named in a warning at start: it stays empty", async () => {
  const settings = settingsFrom("resources:\n  secrets: { enabled: false }");
  const registry = twoResources();
  registry.on.index("secrets", ({ name }) => ({ [name]: true }), { id: "secretNames" });
  registry.on.index("v1/configmaps", ({ name }) => ({ [name]: true }), { id: "configMapNames" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const sink = memorySink("warn");
  const stop = new AbortController();
  const { promise: started, resolve } = Promise.withResolvers<void>();
  const running = run({ signal: stop.signal, settings, client, registry, logger: new Logger(sink), onStarted: () => resolve() });
  try {
    await started;
    const warned = sink.lines.filter((l) => l.includes("an index stays empty"));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain("secretNames");
    expect(warned[0]).toContain("resources.secrets.enabled");
  } finally {
    stop.abort();
    await running;
    client.close();
  }
}, 15_000);

test("handling and workers of an entry override the global ones for that resource only: a failed handler retries after the entry's backoff", async () => {
  // Global backoff 60 s: only the entry's 50 ms lets the retry come within the test's bound.
  const settings = settingsFrom("namespaces: { include: [default] }\nresources:\n  v1/configmaps: { handling: { backoff: 50ms, retries: 3 }, workers: { batchWindow: 0s } }");
  expect(settings.handling.backoff).toBe(60);
  const calls: number[] = [];
  const { promise: retried, resolve } = Promise.withResolvers<void>();
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {
    calls.push(Date.now());
    if (calls.length === 1) throw new Error("first attempt fails");
    resolve();
  }, { id: "flaky" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const stop = new AbortController();
  const running = run({ signal: stop.signal, settings, client, registry, logger: new Logger(memorySink("error")) });
  try {
    const response = await fetch(`${sandbox.url}/api/v1/namespaces/default/configmaps`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name: "flaky" } }) });
    expect(response.status).toBe(201);
    await retried;
    expect(calls.length).toBe(2);
    expect(calls[1]! - calls[0]!).toBeLessThan(10_000);
  } finally {
    stop.abort();
    await running;
    client.close();
  }
}, 20_000);
