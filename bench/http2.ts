// HTTP/2 against HTTP/1.1 to a real kube-apiserver (test/cluster), the client alone: the CPU
// this process spends per request (a merge PATCH of a ConfigMap and its JSON answer, 100 in
// flight, each lane its own ConfigMap, one FetchSession as kobun's transport has), and wall.
// Rounds alternate h1.1, h2, h1.1, h2... so a busy machine weighs on both alike; medians.
//
//   bun bench/http2.ts [--requests 4000] [--rounds 5]

import { parseArgs } from "node:util";
import { startCluster } from "../test/cluster/cluster.ts";
import { median, report, round } from "./common.ts";

const { values } = parseArgs({ options: { requests: { type: "string", default: "4000" }, rounds: { type: "string", default: "5" } } });
const requests = Number(values.requests);
const rounds = Number(values.rounds);
if (!Number.isInteger(requests) || requests < 100 || !Number.isInteger(rounds) || rounds < 1) throw new Error("--requests: an integer ≥ 100; --rounds: ≥ 1");

type Protocol = "http1.1" | "http2";
const cluster = await startCluster({ timeoutMs: 120_000, controllerManager: false });
try {
  const headers = { authorization: `Bearer ${cluster.token}`, accept: "application/json", "content-type": "application/merge-patch+json" };
  const base = `${cluster.url}/api/v1/namespaces/default/configmaps`;
  const LANES = 100;
  const setup = new Bun.FetchSession({ tls: { ca: cluster.caPem }, keepAlive: false });
  for (let lane = 0; lane < LANES; lane++) {
    const made = await setup.fetch(base, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ metadata: { name: `h2-bench-${lane}` }, data: { n: "0" } }) });
    if (!made.ok) throw new Error(`POST: HTTP ${made.status}`);
  }
  const figures: Record<Protocol, { cpuUsPerRequest: number[]; wallMs: number[] }> = {
    "http1.1": { cpuUsPerRequest: [], wallMs: [] }, http2: { cpuUsPerRequest: [], wallMs: [] },
  };
  for (let pass = 0; pass < rounds; pass++) {
    for (const protocol of ["http1.1", "http2"] as const) {
      const session = new Bun.FetchSession({ tls: { ca: cluster.caPem } });
      let next = 0;
      const started = performance.now();
      const cpu = process.cpuUsage();
      await Promise.all(Array.from({ length: LANES }, async (_, lane) => {
        while (next < requests) {
          const n = next++;
          const response = await session.fetch(`${base}/h2-bench-${lane}`, { method: "PATCH", headers, protocol, body: JSON.stringify({ data: { n: String(n) } }) });
          JSON.parse(await response.text());
          if (!response.ok) throw new Error(`PATCH: HTTP ${response.status}`);
        }
      }));
      const used = process.cpuUsage(cpu);
      const wall = performance.now() - started;
      figures[protocol].cpuUsPerRequest.push((used.user + used.system) / requests);
      figures[protocol].wallMs.push(wall);
      session.close();
    }
  }
  const summary = Object.fromEntries(Object.entries(figures).map(([protocol, f]) => [protocol, {
    cpuUsPerRequest: round(median(f.cpuUsPerRequest), 1), spread: [round(Math.min(...f.cpuUsPerRequest), 1), round(Math.max(...f.cpuUsPerRequest), 1)],
    wallMs: Math.round(median(f.wallMs)),
  }]));
  report("http2", { requests, rounds, ...summary, cpuRatio: round(median(figures.http2.cpuUsPerRequest) / median(figures["http1.1"].cpuUsPerRequest)) });
} finally {
  await cluster.stop();
}
