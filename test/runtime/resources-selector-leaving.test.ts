// An object that stops matching resources.<key>.labelSelector leaves the operator's watch (the
// API server sends DELETED while the object lives on): the operator cannot see its deletion any
// more, so the finalizer it holds for its delete handlers is released then; otherwise the
// object, once deleted, would stay Terminating for ever.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { parseConfigText, resolveSettings } from "../../src/config/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { memorySink, Logger } from "../../src/util/log.ts";

let sandbox: Sandbox;
beforeAll(async () => (sandbox = await startSandbox()));
afterAll(() => sandbox.stop());

const FINALIZER = "kobun.dev/finalizer";
const path = (name = "") => `${sandbox.url}/api/v1/namespaces/default/configmaps${name ? `/${name}` : ""}`;

async function finalizersOf(name: string): Promise<string[] | undefined> {
  const response = await fetch(path(name));
  if (response.status === 404) return undefined;
  return ((await response.json()) as { metadata: { finalizers?: string[] } }).metadata.finalizers ?? [];
}

/** Polls the object (no watch: the test must not add one beside the operator's) until `wanted` holds; bounded. */
async function until(name: string, wanted: (finalizers: string[] | undefined) => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!wanted(await finalizersOf(name))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

test("an object relabelled out of the resource's labelSelector loses the operator's finalizer, so deleting it later is not blocked", async () => {
  const settings = resolveSettings({
    fileData: parseConfigText("peering: { standalone: true }\nnamespaces: { include: [default] }\nresources:\n  v1/configmaps:\n    labelSelector: app=web\n", "kobun.yaml"),
  });
  const registry = new Registry();
  const deleted: string[] = [];
  registry.on.delete("v1/configmaps", ({ name }) => void deleted.push(name), { id: "on-delete" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const stop = new AbortController();
  const { promise: started, resolve: onStarted } = Promise.withResolvers<void>();
  const running = run({ signal: stop.signal, settings, client, registry, logger: new Logger(memorySink("error")), onStarted: () => onStarted() });
  try {
    await started;
    const created = await fetch(path(), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name: "leaving", labels: { app: "web" } } }) });
    expect(created.status).toBe(201);
    await until("leaving", (f) => f?.includes(FINALIZER) ?? false, "the operator's finalizer on the matching object");

    const relabelled = await fetch(path("leaving"), { method: "PATCH", headers: { "content-type": "application/merge-patch+json" }, body: JSON.stringify({ metadata: { labels: { app: "db" } } }) });
    expect(relabelled.status).toBe(200);
    await until("leaving", (f) => f !== undefined && !f.includes(FINALIZER), "the finalizer released once the object left the selector");

    expect((await fetch(path("leaving"), { method: "DELETE" })).status).toBe(200);
    expect(await finalizersOf("leaving")).toBeUndefined(); // gone at once: nothing holds it
    expect(deleted).toEqual([]); // out of the operator's sight: its delete handlers were not for it
  } finally {
    stop.abort();
    await running;
    client.close();
  }
}, 30_000);
