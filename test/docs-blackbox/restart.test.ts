// testing.md's "Underneath" (startSandbox + run(), as its example writes them) used for what the kit
// cannot do, a restart of the operator against the same API server: on.resume runs for an object
// handled before (Kopf's), not for one created while the operator was down, whose create runs;
// progress and results survive the restart.

import { expect, test } from "bun:test";
import { Logger, memorySink, Registry, resolveSettings, run } from "kobun";
import { startSandbox } from "kobun/sandbox";

const base = (url: string) => `${url}/api/v1/namespaces/default/configmaps`;

async function createConfigMap(url: string, name: string): Promise<void> {
  const response = await fetch(base(url), {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: {} }),
  });
  expect(response.status).toBe(201);
}

function operator(kubeconfig: string, registry: Registry) {
  const stop = new AbortController();
  const settings = resolveSettings({ flags: { kubeconfig, namespaces: ["default"], standalone: true } });
  const logs = memorySink("info", "plain", { max: 1000 });
  const running = run({ signal: stop.signal, settings, registry, logger: new Logger(logs) });
  return { logs, stop: async () => { stop.abort(); await running; } };
}

test("after a restart, on.resume runs for the objects handled before, on.create for one made meanwhile, each once", async () => {
  const sandbox = await startSandbox();
  const calls: string[] = [];
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ name }) => { calls.push(`create ${name}`); }, { id: "create_fn" });
  registry.on.resume("v1/configmaps", ({ name }) => { calls.push(`resume ${name}`); }, { id: "resume_fn" });
  try {
    const first = operator(sandbox.kubeconfigPath, registry);
    await first.logs.until(/operator ready/, { timeout: 15_000 });
    await createConfigMap(sandbox.url, "old");
    await first.logs.until(/Handler 'create_fn' succeeded\..*name=old/, { timeout: 15_000 });
    await first.stop();
    await createConfigMap(sandbox.url, "new");
    const second = operator(sandbox.kubeconfigPath, registry);
    await second.logs.until(/Handler 'resume_fn' succeeded\..*name=old/, { timeout: 15_000 });
    await second.logs.until(/Handler 'create_fn' succeeded\..*name=new/, { timeout: 15_000 });
    await second.stop();
    expect(calls.sort()).toEqual(["create new", "create old", "resume old"]);
  } finally {
    await sandbox.stop();
  }
}, 45_000);
