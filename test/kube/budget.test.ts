// The connection budget (issue 11): watch streams beyond it wait for a slot instead of taking
// the fetch slots requests need; waiting streams are a health problem, logged once.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { fetchSlots, streamBudget, StreamBudget } from "../../src/kube/budget.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { Health } from "../../src/observability/health.ts";
import { reportStarvedStreams } from "../../src/streams/starvation.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Logger, memorySink } from "../../src/util/log.ts";
import { eventually } from "../runtime/helpers.ts";

let sandbox: Sandbox;
let client: KubeClient;
beforeAll(async () => {
  sandbox = await startSandbox();
  client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
});
afterAll(async () => {
  client.close();
  await sandbox.stop();
});

test("the budget follows Bun's per-process limit and keeps a reserve for requests", () => {
  expect(fetchSlots({})).toBe(256);
  expect(fetchSlots({ BUN_CONFIG_MAX_HTTP_REQUESTS: "1024" })).toBe(1024);
  expect(fetchSlots({ BUN_CONFIG_MAX_HTTP_REQUESTS: "lots" })).toBe(256);
  expect(new StreamBudget(256).limit).toBe(192);
  expect(new StreamBudget(1024).limit).toBe(768);
  expect(new StreamBudget(8).limit).toBe(1);
});

test("a stream that fails to open gives its slot back at once, without waiting for its signal", async () => {
  const before = streamBudget.open;
  const error = await client.stream("/api/v1/namespaces/default/nosuchthings", { watch: "true" }, new AbortController().signal).catch((e) => e);
  expect(error).toBeInstanceOf(Error);
  expect(streamBudget.open).toBe(before);
});

test("streams beyond the budget wait, requests still get through, and the wait is reported once", async () => {
  const health = new Health();
  const sink = memorySink("info");
  const stopReport = new AbortController();
  const reporting = reportStarvedStreams({ budget: streamBudget, health, logger: new Logger(sink) }, stopReport.signal);
  const extra = 5;
  const count = streamBudget.limit - streamBudget.open + extra;
  const streams = Array.from({ length: count }, () => new AbortController());
  const opened = streams.map((c) => client.stream("/api/v1/namespaces/default/configmaps", { watch: "true" }, c.signal).then((r) => r.body?.getReader(), () => undefined));
  try {
    await eventually(() => streamBudget.waiting >= extra, "the streams beyond the budget to wait", 20_000);
    expect(streamBudget.waiting).toBe(extra);
    expect(streamBudget.open).toBe(streamBudget.limit);
    // A write is not queued behind the watches: it lands at once.
    const started = performance.now();
    await client.create({ group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false }, "default", { metadata: { name: "through" } });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(health.healthy).toBe(false);
    expect(health.report().problems["watch streams"]).toMatch(new RegExp(`^${extra} watch streams cannot open`));
    // Freeing one slot lets a waiting stream open; the warning is not repeated.
    streams[0]!.abort();
    await eventually(() => streamBudget.waiting === extra - 1, "a waiting stream to get the freed slot");
    expect(sink.lines.filter((l) => /watch streams are waiting for a connection/.test(l))).toHaveLength(1);
  } finally {
    for (const c of streams) c.abort();
    await Promise.all(opened);
  }
  expect(streamBudget.waiting).toBe(0);
  expect(health.healthy).toBe(true);
  expect(sink.lines.filter((l) => /every watch stream has a connection again/.test(l))).toHaveLength(1);
  stopReport.abort();
  await reporting;
}, 30_000);
