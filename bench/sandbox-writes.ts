// The sandbox's own cost per write: CPU µs the sandbox process spends per merge PATCH (a
// ConfigMap's data, a Deployment's replicas and a label), beside a GET of the same object
// (the HTTP, routing and auth share of every request). The sandbox runs in its own process
// (sandbox-server.ts), so the client's CPU is not counted. `bun bench/sandbox-writes.ts`.

import { median, report, round, spawnSandbox } from "./common.ts";

const WRITES = Number(process.env.KOBUN_BENCH_WRITES ?? 2000);
const ROUNDS = 5;

const deployment = {
  metadata: { name: "web", labels: { app: "web" } },
  spec: {
    replicas: 1, selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "web", image: "nginx:1.27", ports: [{ containerPort: 80 }], env: [{ name: "A", value: "1" }, { name: "B", value: "2" }] }] },
    },
  },
};

const sandbox = await spawnSandbox();
try {
  const post = (path: string, body: unknown) => fetch(`${sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await post("/api/v1/namespaces/default/configmaps", { metadata: { name: "cm" }, data: { a: "0" } });
  await post("/apis/apps/v1/namespaces/default/deployments", deployment);
  const cm = `${sandbox.url}/api/v1/namespaces/default/configmaps/cm?fieldManager=bench`;
  const deploy = `${sandbox.url}/apis/apps/v1/namespaces/default/deployments/web?fieldManager=bench`;
  const merge = (url: string, body: unknown) => fetch(url, { method: "PATCH", headers: { "content-type": "application/merge-patch+json" }, body: JSON.stringify(body) });

  /** CPU µs of the sandbox per request of `send` (median over rounds) */
  const perRequest = async (send: (i: number) => Promise<Response>): Promise<number> => {
    const rounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const before = await sandbox.cpuUs();
      for (let i = 0; i < WRITES / ROUNDS; i++) {
        const response = await send(r * WRITES + i);
        if (!response.ok) throw new Error(`bench: ${response.status} ${await response.text()}`);
        await response.arrayBuffer();
      }
      rounds.push(((await sandbox.cpuUs()) - before) / (WRITES / ROUNDS));
    }
    return median(rounds);
  };
  await perRequest((i) => merge(cm, { data: { a: String(i) } })); // warm-up (JIT)
  const getUs = await perRequest(() => fetch(cm));
  const configMapUs = await perRequest((i) => merge(cm, { data: { a: String(i) } }));
  const deploymentUs = await perRequest((i) => merge(deploy, { metadata: { labels: { rev: String(i) } }, spec: { replicas: 1 + (i % 3) } }));
  report("sandbox-writes", {
    writes: WRITES,
    getCpuUs: round(getUs, 1),
    configMapMergePatchCpuUs: round(configMapUs, 1),
    deploymentMergePatchCpuUs: round(deploymentUs, 1),
    configMapPatchOverGet: round(configMapUs / getUs),
  });
} finally {
  await sandbox.stop();
}
