// Bench for src/watching/: figures as ratios to a bare `fetch` doing the same work against
// the same sandbox in the same run. Run: `bun bench/watch.ts` (prints one JSON object).
//   - streaming list: N pre-existing objects, watcher (relist-start … relist-done) vs a bare
//     fetch of the same sendInitialEvents watch counting lines up to the end bookmark;
//   - live events: N creates while both watch; time from the first create to the N-th event;
//   - (410 → next LIST is bench/gone.ts: timed by an API server in its own process, since a
//     sandbox sharing this event loop with the watcher adds its own work to the figure);
//   - abort → iterator ended, for an idle watch.

import { KubeClient } from "../src/kube/client.ts";
import { resourcePath, type Resource } from "../src/kube/types.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Watcher } from "../src/watching/watcher.ts";
import type { WatchEvent } from "../src/watching/types.ts";

const N = Number(process.env.N ?? 5000);
const RUNS = Number(process.env.RUNS ?? 5);
const configmaps: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const path = resourcePath(configmaps, "default");

async function openWatches(sandbox: Sandbox, n: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (sandbox.stats.openWatches() !== n) {
    if (Date.now() > deadline) throw new Error(`expected ${n} open watches, have ${sandbox.stats.openWatches()}`);
    await Bun.sleep(1);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

async function populate(client: KubeClient, n: number, prefix: string): Promise<void> {
  const batch = 100;
  for (let i = 0; i < n; i += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, n - i) }, (_, j) =>
        client.create(configmaps, "default", { metadata: { name: `${prefix}-${i + j}` }, data: { index: String(i + j), text: "ünïcødé payload ".repeat(8) } }),
      ),
    );
  }
}

/**
 * The baseline: the same transport (KubeClient.stream, a bare streaming fetch with the client's
 * TLS/auth) read with a minimal split-and-parse loop, no state machine, no events.
 */
async function bareWatch(client: KubeClient, query: string, onLine: (line: string) => boolean, ready?: () => void): Promise<void> {
  const controller = new AbortController();
  const response = await client.stream(path, Object.fromEntries(new URLSearchParams(query)), controller.signal);
  ready?.();
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let rest = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      const text = rest + decoder.decode(value, { stream: true });
      const lines = text.split("\n");
      rest = lines.pop()!;
      for (const line of lines) if (line && onLine(line)) return;
    }
  } finally {
    controller.abort();
  }
}

async function streamingList(sandbox: Sandbox, client: KubeClient) {
  const watcherMs: number[] = [];
  const bareMs: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    let started = performance.now();
    let count = 0;
    await bareWatch(client, "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", (line) => {
      if (line.includes('"BOOKMARK"') && line.includes("initial-events-end")) return true;
      JSON.parse(line);
      count++;
      return false;
    });
    bareMs.push(performance.now() - started);
    if (count !== N) throw new Error(`bare streaming list saw ${count} of ${N}`);

    const controller = new AbortController();
    const watcher = new Watcher(client, configmaps, { namespace: "default", streamingList: "always" });
    started = performance.now();
    let listed = 0;
    for await (const event of watcher.events(controller.signal)) {
      if (event.type === "listed") listed++;
      if (event.type === "relist-done") break;
    }
    watcherMs.push(performance.now() - started);
    if (listed !== N) throw new Error(`watcher streaming list saw ${listed} of ${N}`);
  }
  const w = median(watcherMs);
  const b = median(bareMs);
  return { objects: N, watcherMs: round(w), bareFetchMs: round(b), watcherEventsPerSec: Math.round((N / w) * 1000), bareEventsPerSec: Math.round((N / b) * 1000), ratio: round(w / b) };
}

async function pagedList(client: KubeClient) {
  const ms: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const controller = new AbortController();
    const watcher = new Watcher(client, configmaps, { namespace: "default", streamingList: "never" });
    const started = performance.now();
    for await (const event of watcher.events(controller.signal)) if (event.type === "relist-done") break;
    ms.push(performance.now() - started);
  }
  const m = median(ms);
  return { objects: N, pageSize: 500, watcherMs: round(m), eventsPerSec: Math.round((N / m) * 1000) };
}

async function liveEvents(sandbox: Sandbox, client: KubeClient, run: number) {
  const rv = sandbox.store.resourceVersion();
  const controller = new AbortController();
  let watcherDone = 0;
  let bareDone = 0;
  let firstCreate = 0;
  const watcher = new Watcher(client, configmaps, { namespace: "default", streamingList: "never" });
  let relisted!: () => void;
  const ready = new Promise<void>((resolve) => (relisted = resolve));
  const watching = (async () => {
    let added = 0;
    for await (const event of watcher.events(controller.signal) as AsyncIterable<WatchEvent>) {
      if (event.type === "relist-done") relisted();
      if (event.type === "added" && ++added === N) {
        watcherDone = performance.now();
        break;
      }
    }
  })();
  let bareOpen!: () => void;
  const bareReady = new Promise<void>((resolve) => (bareOpen = resolve));
  let bareAdded = 0;
  const bare = bareWatch(client, `watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`, (line) => {
    const event = JSON.parse(line);
    if (event.type === "ADDED" && ++bareAdded === N) {
      bareDone = performance.now();
      return true;
    }
    return false;
  }, bareOpen);
  await Promise.all([ready, bareReady]);
  await openWatches(sandbox, 2);
  firstCreate = performance.now();
  await populate(client, N, `live${run}`);
  await Promise.all([watching, bare]);
  controller.abort();
  await openWatches(sandbox, 0);
  return { watcherMs: watcherDone - firstCreate, bareMs: bareDone - firstCreate };
}

async function abortIdle(sandbox: Sandbox, client: KubeClient) {
  const ms: number[] = [];
  for (let i = 0; i < 9; i++) {
    const controller = new AbortController();
    const watcher = new Watcher(client, configmaps, { namespace: "kube-system", streamingList: "never" });
    const opened = sandbox.waitFor((r) => r.verb === "watch", 5000);
    const done = (async () => {
      for await (const _ of watcher.events(controller.signal));
    })();
    await opened;
    await openWatches(sandbox, 1);
    const started = performance.now();
    controller.abort();
    await done;
    ms.push(performance.now() - started);
    await openWatches(sandbox, 0);
  }
  return { medianMs: round(median(ms), 3), maxMs: round(Math.max(...ms), 3) };
}

const sandbox = await startSandbox({ historySize: N * 2 + 1000, bookmarkIntervalMs: 60_000 });
const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
try {
  await populate(client, N, "pre");
  const streaming = await streamingList(sandbox, client);
  const paged = await pagedList(client);
  const live: { watcherMs: number; bareMs: number }[] = [];
  for (let run = 0; run < 3; run++) live.push(await liveEvents(sandbox, client, run));
  const liveW = median(live.map((x) => x.watcherMs));
  const liveB = median(live.map((x) => x.bareMs));
  const abort = await abortIdle(sandbox, client);
  console.log(
    JSON.stringify(
      {
        bun: Bun.version,
        streamingList: streaming,
        pagedList: paged,
        liveEvents: { events: N, watcherMs: round(liveW), bareFetchMs: round(liveB), ratio: round(liveW / liveB), note: "create-bound: both consumers watch the same creates" },
        abortIdleWatch: abort,
        openWatchesAfter: sandbox.stats.openWatches(),
      },
      null,
      2,
    ),
  );
} finally {
  client.close();
  await sandbox.stop();
}
