// client-go's workqueue_* metrics of a running operator, scraped over HTTP from its probe
// listener: adds, the time in the queue and at work, re-runs counted as retries, and the
// gauges read at scrape time (depth, work in progress, the longest-running processor).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry, TemporaryError } from "../../src/declaring/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";
import { eventPoll, scraper } from "./scrape.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

test("workqueue metrics on /metrics follow the object queue: adds, depth behind a busy worker, work in progress, retries", async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const registry = new Registry();
  registry.on.create("v1/configmaps", async ({ name, retry }) => {
    if (name.startsWith("slow")) await gate;
    if (name.startsWith("retry") && retry === 0) throw new TemporaryError("not yet", { delay: 0.05 });
  }, { id: "c" });
  const stop = new AbortController();
  let probeUrl = "";
  const running = run({
    signal: stop.signal, client: e.client, registry, logger: testLogger().logger,
    // One worker: a second object waits in the queue while the slow one holds it.
    settings: resolveSettings({ fileData: { workers: { limit: 1 } }, flags: { namespaces: ["default"], standalone: true, liveness: "http://127.0.0.1:0/healthz" } }),
    onStarted: (info) => (probeUrl = info.probeUrl ?? ""),
  });
  const { scrape, value, has } = scraper(() => probeUrl.replace(/\/healthz$/, "/metrics"));
  const q = (metric: string) => `${metric}{name="configmaps",controller="configmaps"}`;
  const create = (name: string) => fetch(`${e.sandbox.url}/api/v1/namespaces/default/configmaps`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name } }),
  });
  try {
    await eventually(() => probeUrl !== "", "the operator to start");
    await scrape();
    for (const metric of ["workqueue_adds_total", "workqueue_retries_total", "workqueue_depth", "workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds"]) {
      expect(has(q(metric))).toBe(true);
      expect(value(q(metric))).toBe(0);
    }

    await create("slow-1");
    await eventPoll(scrape, () => value(q("workqueue_longest_running_processor_seconds")) > 0, "the slow object to be at work");
    expect(value(q("workqueue_adds_total"))).toBe(1);
    expect(value(q("workqueue_queue_duration_seconds_count"))).toBe(1);
    expect(value(q("workqueue_work_duration_seconds_count"))).toBe(0);
    expect(value(q("workqueue_unfinished_work_seconds"))).toBeGreaterThan(0);

    await create("other-1");
    await eventPoll(scrape, () => value(q("workqueue_depth")) === 1, "the second object to wait behind the busy worker");
    expect(value(q("workqueue_adds_total"))).toBe(2);
    release();
    await eventPoll(scrape, () => value(q("workqueue_work_duration_seconds_count")) >= 2 && value(q("workqueue_depth")) === 0, "both objects handled");
    expect(value(q("workqueue_longest_running_processor_seconds"))).toBe(0);
    expect(value(q("workqueue_queue_duration_seconds_count"))).toBe(value(q("workqueue_work_duration_seconds_count")));

    const addsBefore = value(q("workqueue_adds_total"));
    await create("retry-1");
    await eventPoll(scrape, () => value(q("workqueue_retries_total")) === 1 && value('kobun_handler_runs_total{controller="configmaps",handler="c",cause="create",outcome="success"}') === 3, "the retried object to succeed");
    // Its first item and its re-run each entered the queue.
    expect(value(q("workqueue_adds_total"))).toBeGreaterThanOrEqual(addsBefore + 2);
  } finally {
    release();
    stop.abort();
    await running;
  }
}, 20_000);
