// kube/ and watching/ report through observers of their own; runtime/ turns them into
// client-go's rest_client_* and kobun's watch metrics. Scraped over HTTP from a real
// listener while a real (sandbox) API server answers, fails and expires watches.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { KubeClient, type KubeObject, type Resource } from "../../src/kube/index.ts";
import { Health } from "../../src/observability/health.ts";
import { startMetricsServer, type ProbeServer } from "../../src/observability/probes.ts";
import { budgetMetrics, reconcileMetrics, requestMetrics, watchMetrics } from "../../src/runtime/metrics.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Watcher } from "../../src/watching/watcher.ts";
import { StreamBudget } from "../../src/kube/budget.ts";
import { RequestObservers } from "../../src/kube/observer.ts";
import type { WatchEvent } from "../../src/watching/types.ts";
import { watchOpen } from "../watching/helpers.ts";

const CM: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const cm = (name: string): KubeObject => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { k: "v" } });

let sandbox: Sandbox;
let health: Health;
let server: ProbeServer;
let client: KubeClient;
beforeAll(async () => {
  sandbox = await startSandbox();
  health = new Health();
  server = startMetricsServer("http://127.0.0.1:0", health);
  client = await KubeClient.connect({
    kubeconfig: sandbox.kubeconfigPath, retries: 2, backoff: { initialMs: 5, maxMs: 10 }, observer: requestMetrics(health.metrics),
  });
});
afterAll(async () => {
  client.close();
  await server.stop();
  await sandbox.stop();
});

/** One sample's value from a real scrape; 0 when the series does not exist yet. */
async function sample(series: string): Promise<number> {
  const text = await (await fetch(server.url)).text();
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

test("rest_client_requests_total counts every attempt by code, method and host, with its duration", async () => {
  const host = new URL(sandbox.url).host;
  const created = `rest_client_requests_total{code="201",method="POST",host="${host}"}`;
  const failed = `rest_client_requests_total{code="500",method="GET",host="${host}"}`;
  const ok = `rest_client_requests_total{code="200",method="GET",host="${host}"}`;
  const before = { created: await sample(created), failed: await sample(failed), ok: await sample(ok) };
  await client.create(CM, "default", cm("counted"));
  sandbox.faults.failNext(1, 500, { verb: "get", plural: "configmaps" });
  await client.get(CM, "default", "counted"); // 500, then retried: 200
  expect(await sample(created)).toBe(before.created + 1);
  expect(await sample(failed)).toBe(before.failed + 1);
  expect(await sample(ok)).toBe(before.ok + 1);
  expect(await sample(`rest_client_request_duration_seconds_count{verb="GET",host="${host}"}`)).toBeGreaterThanOrEqual(2);
});

test("the host label is the server's host[:port] as written, as client-go's: in a pod, an explicit :443 stays", () => {
  const hosts = ["https://10.96.0.1:443", "https://[fd00::1]:443", "https://api.example.com", "http://u:p@127.0.0.1:8080/x"]
    .map((server) => new RequestObservers(server).host);
  expect(hosts).toEqual(["10.96.0.1:443", "[fd00::1]:443", "api.example.com", "127.0.0.1:8080"]);
});

test("a request that gets no answer is counted with code <error>", async () => {
  // Same credentials, a server that closes every connection at once.
  const port = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {}, open: (s) => void s.end() } });
  try {
    const closing = await KubeClient.connect({
      kubeconfig: await rewriteServer(sandbox.kubeconfigPath, `http://127.0.0.1:${port.port}`), retries: 0, observer: requestMetrics(health.metrics),
    });
    await expect(closing.get(CM, "default", "x")).rejects.toThrow();
    expect(await sample(`rest_client_requests_total{code="<error>",method="GET",host="127.0.0.1:${port.port}"}`)).toBe(1);
    closing.close();
  } finally {
    port.stop(true);
  }
});

test("watch events are counted by type and restarts by reason (410 from the server)", async () => {
  const watcher = new Watcher(client, CM, { namespace: "default", observer: watchMetrics(health.metrics, "configmaps"), streamingList: "never" });
  const stop = new AbortController();
  const seen: WatchEvent[] = [];
  let wake: () => void = () => {};
  const consumed = (async () => {
    for await (const event of watcher.events(stop.signal)) {
      seen.push(event);
      wake();
    }
  })();
  const until = (pred: () => boolean) => new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out; saw ${seen.map((e) => e.type).join(",")}`)), 10_000);
    wake = () => pred() && (clearTimeout(timer), resolve());
    wake();
  });
  try {
    await until(() => seen.some((e) => e.type === "relist-done"));
    await client.create(CM, "default", cm("a"));
    await client.patch(CM, "default", "a", { data: { k: "w" } });
    await until(() => seen.filter((e) => e.type === "added" || e.type === "modified").length === 2);
    expect(await sample('kobun_watch_events_total{resource="configmaps",type="ADDED"}')).toBe(1);
    expect(await sample('kobun_watch_events_total{resource="configmaps",type="MODIFIED"}')).toBe(1);
    const relists = seen.filter((e) => e.type === "relist-done").length;
    // A slow relist, as on a loaded machine: the unknown events below reach only a registered
    // stream, so the test waits for the new watch itself, not for the relist to begin.
    sandbox.faults.stallNext(1, 300, { verb: "list", plural: "configmaps" });
    sandbox.faults.expireWatches();
    await until(() => seen.filter((e) => e.type === "relist-done").length > relists);
    await watchOpen(sandbox);
    expect(await sample('kobun_watch_restarts_total{resource="configmaps",reason="410"}')).toBe(1);
    expect(await sample('kobun_watch_events_total{resource="configmaps",type="ERROR"}')).toBe(1);
    sandbox.faults.sendUnknownEvent("FUTURE");
    sandbox.faults.sendUnknownEvent("FUTURE2");
    await client.create(CM, "default", cm("b")); // after the unknown ones on the same stream
    await until(() => seen.filter((e) => e.type === "added").length === 2);
    expect(await sample('kobun_watch_events_total{resource="configmaps",type="unknown"}')).toBe(2);
  } finally {
    stop.abort();
    await consumed;
  }
}, 30_000); // a dozen round trips and two relists on a loaded machine

test("open and waiting watch streams and the connection budget are read from the budget at scrape time", async () => {
  const own = new Health();
  const budget = new StreamBudget(66); // a limit of 2 streams
  budgetMetrics(own.metrics, budget);
  const held = new AbortController();
  await budget.acquire(held.signal);
  await budget.acquire(held.signal);
  const queued = new AbortController();
  const waiting = budget.acquire(queued.signal).catch(() => {});
  const text = own.exposition();
  expect(text).toContain("kobun_watch_streams_open 2\n");
  expect(text).toContain("kobun_watch_streams_waiting 1\n");
  expect(text).toContain("kobun_watch_connection_budget 2\n");
  queued.abort();
  held.abort();
  await waiting;
  expect(own.exposition()).toContain("kobun_watch_streams_open 0\n");
});

test("failed and refused writes, abandoned runs and watch failures are exposed as they always were, and only once they happened", async () => {
  const own = new Health();
  const reconciles = [reconcileMetrics(own.metrics, "configmaps", 1), reconcileMetrics(own.metrics, "kobunexamples.kobun.dev", 1)];
  const watches = [watchMetrics(own.metrics, "configmaps"), watchMetrics(own.metrics, "kobunexamples.kobun.dev")];
  const counted = (openMetrics = false) => own.exposition(openMetrics).split("\n").filter((l) => /watch_failures|processing_|_abandoned/.test(l));
  expect(counted()).toEqual([]);
  reconciles[0]!.writeFailed();
  reconciles[1]!.writeRefused();
  reconciles[0]!.handlerAbandoned();
  reconciles[1]!.backgroundAbandoned();
  watches[0]!.failed();
  watches[1]!.failed();
  watches[0]!.failed();
  // What `Health.count("name{labels}")` printed for the same calls before the string form went.
  expect(counted()).toEqual([
    "# HELP kobun_background_abandoned_total kobun background abandoned.",
    "# TYPE kobun_background_abandoned_total counter",
    "kobun_background_abandoned_total 1",
    "# HELP kobun_handlers_abandoned_total kobun handlers abandoned.",
    "# TYPE kobun_handlers_abandoned_total counter",
    "kobun_handlers_abandoned_total 1",
    "# HELP kobun_processing_failures_total kobun processing failures.",
    "# TYPE kobun_processing_failures_total counter",
    "kobun_processing_failures_total 1",
    "# HELP kobun_processing_refusals_total kobun processing refusals.",
    "# TYPE kobun_processing_refusals_total counter",
    "kobun_processing_refusals_total 1",
    "# HELP kobun_watch_failures_total kobun watch failures.",
    "# TYPE kobun_watch_failures_total counter",
    'kobun_watch_failures_total{resource="configmaps"} 2',
    'kobun_watch_failures_total{resource="kobunexamples.kobun.dev"} 1',
  ]);
  expect(counted(true).filter((l) => l.startsWith("# TYPE"))).toEqual([
    "# TYPE kobun_background_abandoned counter", "# TYPE kobun_handlers_abandoned counter", "# TYPE kobun_processing_failures counter",
    "# TYPE kobun_processing_refusals counter", "# TYPE kobun_watch_failures counter",
  ]);
  // Served over HTTP as they are rendered.
  const served = new Health();
  const server = startMetricsServer("http://127.0.0.1:0", served);
  try {
    reconcileMetrics(served.metrics, "configmaps", 1).writeFailed();
    expect(await (await fetch(server.url)).text()).toContain("\nkobun_processing_failures_total 1\n");
  } finally {
    await server.stop();
  }
});

async function rewriteServer(kubeconfigPath: string, server: string): Promise<string> {
  const text = (await Bun.file(kubeconfigPath).text()).replace(/server: .*/, `server: ${server}`);
  const path = `${kubeconfigPath}.closing`;
  await Bun.write(path, text);
  return path;
}
