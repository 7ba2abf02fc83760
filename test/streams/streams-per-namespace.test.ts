// Issue 11, defect 1, with several handled resources: watching.clusterWideAbove counts
// namespaces, but the connection budget counts streams, one per namespace and resource (and
// one more for a namespace's peering). 50 namespaces (the default threshold) × 4 resources
// are 200 streams, more than the budget's 192: the last ones would wait for a slot forever
// and their objects never be seen. The operator goes cluster-wide as soon as a watch per
// namespace and resource would not fit, whatever the threshold says.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { streamBudget } from "../../src/kube/budget.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { installCRDs, testLogger } from "../peering/helpers.ts";

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

const kinds = ["configmaps", "secrets", "serviceaccounts", "services"] as const;

async function post(path: string, body: unknown): Promise<void> {
  const response = await fetch(`${sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
}

function landed(namespaces: string[]): number {
  let n = 0;
  for (const ns of namespaces) for (const plural of kinds) if (sandbox.store.get("", plural, ns, "obj")?.metadata?.labels?.handled === "yes") n++;
  return n;
}

async function handleAll(namespaces: string[], flags: Record<string, unknown>): Promise<{ lines: string[]; starved: number }> {
  for (const ns of namespaces) {
    await post("/api/v1/namespaces", { metadata: { name: ns } });
    await Promise.all(kinds.map((plural) => post(`/api/v1/namespaces/${ns}/${plural}`, { metadata: { name: "obj" } })));
  }
  const registry = new Registry();
  for (const plural of kinds) registry.on.create(`v1/${plural}`, ({ patch }) => void (patch.metadata.labels = { handled: "yes" }), { id: "label" });
  const settings = resolveSettings({ flags: { namespaces: namespaces.length > 1 ? ["many-*"] : namespaces, ...flags } });
  const log = testLogger();
  const stop = new AbortController();
  let starved = 0;
  const off = streamBudget.onChange(({ waiting }) => (starved = Math.max(starved, waiting)));
  const running = run({ signal: stop.signal, settings, client, registry, logger: log.logger });
  const total = namespaces.length * kinds.length;
  try {
    // The server's store has no event to await: poll it, bounded, every 100 ms.
    for (const deadline = Date.now() + 60_000; landed(namespaces) < total; await Bun.sleep(100)) {
      if (Date.now() > deadline) throw new Error(`only ${landed(namespaces)} of ${total} objects handled; ${streamBudget.waiting} streams waiting for a slot`);
    }
  } finally {
    off();
    stop.abort();
    await running;
  }
  return { lines: log.lines, starved };
}

const names = (count: number) => Array.from({ length: count }, (_, i) => `many-${i}`);

test("4 resources in 50 namespaces (at the default threshold): cluster-wide, every object handled, no stream starves", async () => {
  const { lines, starved } = await handleAll(names(50), { standalone: true });
  expect(starved).toBe(0);
  expect(lines.filter((l) => /one cluster-wide watch per resource/.test(l))).toHaveLength(1);
}, 90_000);

test("4 resources with a peering per namespace in 40 namespaces: cluster-wide, every object handled, no stream starves", async () => {
  await installCRDs(client, "kobun.dev");
  const { lines, starved } = await handleAll(names(40), {});
  expect(starved).toBe(0);
  expect(lines.filter((l) => /one cluster-wide watch per resource/.test(l))).toHaveLength(1);
}, 90_000);
