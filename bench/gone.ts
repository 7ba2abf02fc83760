// 410 → next LIST, measured where the API server sees it: the sandbox runs in a child process
// (as a real API server would), sends ERROR 410 to the open watch, and times until the
// watcher's fresh LIST arrives, on its own clock. The operator side runs here with N objects
// known. Baseline in the same run: a bare client that LISTs the moment it reads the ERROR line.
// Target (DESIGN.md): < 5 ms, nothing lost (the relist reports every object).

import { KubeClient } from "../src/kube/client.ts";
import { resourcePath, type Resource } from "../src/kube/types.ts";
import { Watcher } from "../src/watching/watcher.ts";
import { lineReader, median, report, round } from "./common.ts";

const N = Number(process.env.N ?? 5000);
const RUNS = 9;
const configmaps: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

if (process.argv[2] === "--sandbox-child") await child();
else await main();

/** The API server: answers commands on stdin with one JSON line each. */
async function child(): Promise<void> {
  const { startSandbox } = await import("@kobun/sandbox");
  const sandbox = await startSandbox({ historySize: N * 4 + 1000, bookmarkIntervalMs: 60_000 });
  console.log(JSON.stringify({ kubeconfigPath: sandbox.kubeconfigPath, url: sandbox.url }));
  for await (const line of console) {
    const [cmd] = line.trim().split(" ");
    if (cmd === "watches") console.log(JSON.stringify({ watches: sandbox.stats.openWatches() }));
    else if (cmd === "expire") {
      const listed = sandbox.waitFor((r) => r.verb === "list" && r.plural === "configmaps", 5000);
      const t0 = performance.now();
      sandbox.faults.expireWatches();
      await listed;
      console.log(JSON.stringify({ ms: performance.now() - t0 }));
    } else if (cmd === "stop") break;
  }
  await sandbox.stop();
  process.exit(0);
}

async function main(): Promise<void> {
  const server = Bun.spawn([process.execPath, import.meta.path, "--sandbox-child"], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const lines = lineReader(server.stdout);
  const ask = async (cmd: string) => {
    server.stdin.write(cmd + "\n");
    server.stdin.flush();
    return JSON.parse(await lines.next());
  };
  const { kubeconfigPath } = JSON.parse(await lines.next());
  const client = await KubeClient.connect({ kubeconfig: kubeconfigPath });
  try {
    for (let i = 0; i < N; i += 100) {
      await Promise.all(Array.from({ length: Math.min(100, N - i) }, (_, j) => client.create(configmaps, "default", { metadata: { name: `cm-${i + j}` } })));
    }
    const untilWatches = async (n: number) => {
      for (let i = 0; i < 5000 && (await ask("watches")).watches !== n; i++) await Bun.sleep(1);
    };

    // The watcher, as an operator runs it (paged LIST, so the relist is a LIST request).
    const watcher = new Watcher(client, configmaps, { namespace: "default", streamingList: "never" });
    const stop = new AbortController();
    let relists = 0;
    let listed = 0;
    let wake = () => {};
    const consumer = (async () => {
      for await (const event of watcher.events(stop.signal)) {
        if (event.type === "listed") listed++;
        if (event.type === "relist-start") listed = 0;
        if (event.type === "relist-done") {
          relists++;
          wake();
        }
      }
    })();
    const relisted = (n: number) => (relists >= n ? Promise.resolve() : new Promise<void>((resolve) => (wake = () => relists >= n && resolve())));
    await relisted(1);
    const watcherMs: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await untilWatches(1);
      watcherMs.push((await ask("expire")).ms);
      await relisted(i + 2);
      if (listed !== N) throw new Error(`bench: relist reported ${listed} objects, expected ${N}`);
    }
    stop.abort();
    await consumer;
    await untilWatches(0);

    // Baseline: read the watch with a bare stream; LIST the moment the ERROR line arrives.
    const bareMs: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const controller = new AbortController();
      const list = await client.list(configmaps, { namespace: "default", limit: 1 });
      const response = await client.stream(resourcePath(configmaps, "default"), { watch: "true", resourceVersion: list.metadata.resourceVersion! }, controller.signal);
      const reading = (async () => {
        const decoder = new TextDecoder();
        try {
          for await (const chunk of response.body!) {
            if (decoder.decode(chunk, { stream: true }).includes('"ERROR"')) {
              void client.list(configmaps, { namespace: "default", limit: 500 });
              break;
            }
          }
        } catch {}
      })();
      await untilWatches(1);
      bareMs.push((await ask("expire")).ms);
      await reading;
      controller.abort();
      await untilWatches(0);
    }
    report("gone", {
      objects: N,
      runs: RUNS,
      goneToNextListMs: round(median(watcherMs), 3),
      bareGoneToListMs: round(median(bareMs), 3),
      ratio: round(median(watcherMs) / median(bareMs)),
      relistComplete: true,
      targetMs: 5,
    });
  } finally {
    await ask("stop").catch(() => {});
    client.close();
  }
}
