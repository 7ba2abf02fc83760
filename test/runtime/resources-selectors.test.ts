// kobun.yaml's resources.<key>.labelSelector and fieldSelector go with every LIST and WATCH
// the operator sends for that resource, so the server keeps unmatching objects out of what
// the operator receives (before and after start); handler-level `labels` filters still apply.

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

async function configmap(name: string, labels: Record<string, string>): Promise<void> {
  const response = await fetch(`${sandbox.url}/api/v1/namespaces/default/configmaps`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name, labels } }),
  });
  expect(response.status).toBe(201);
}

test("labelSelector and fieldSelector are sent with LIST and WATCH: unmatching objects never reach the operator", async () => {
  await configmap("web-early", { app: "web" });
  await configmap("db-early", { app: "db" });
  await configmap("skip", { app: "web" });
  const settings = resolveSettings({
    fileData: parseConfigText("peering: { standalone: true }\nnamespaces: { include: [default] }\nresources:\n  v1/configmaps:\n    labelSelector: app=web\n    fieldSelector: metadata.name!=skip\n", "kobun.yaml"),
  });
  const received: string[] = [];
  const handled: string[] = [];
  const { promise: lastSeen, resolve } = Promise.withResolvers<void>();
  const registry = new Registry();
  registry.on.event("v1/configmaps", ({ name }) => {
    received.push(name);
    if (name === "web-last") resolve();
  }, { id: "all-events" });
  // Handler-level label filters keep working on top of the server-side selector.
  registry.on.event("v1/configmaps", ({ name }) => void handled.push(name), { id: "tier-front", labels: { tier: "front" } });

  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const stop = new AbortController();
  const { promise: started, resolve: onStarted } = Promise.withResolvers<void>();
  sandbox.stats.reset();
  const running = run({ signal: stop.signal, settings, client, registry, logger: new Logger(memorySink("error")), onStarted: () => onStarted() });
  try {
    await started;
    await configmap("db-late", { app: "db" });
    await configmap("web-front", { app: "web", tier: "front" });
    await configmap("web-last", { app: "web" });
    await lastSeen;
    expect([...new Set(received)].sort()).toEqual(["web-early", "web-front", "web-last"]);
    expect([...new Set(handled)]).toEqual(["web-front"]);
    const requests = sandbox.stats.log.filter((r) => r.plural === "configmaps" && (r.verb === "list" || r.verb === "watch"));
    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) {
      const query = new URLSearchParams(request.query);
      expect([request.verb, query.get("labelSelector"), query.get("fieldSelector")]).toEqual([request.verb, "app=web", "metadata.name!=skip"]);
    }
  } finally {
    stop.abort();
    await running;
    client.close();
  }
}, 20_000);
