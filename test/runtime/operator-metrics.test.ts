// A running operator's /metrics, scraped over HTTP from its probe listener: reconciles (by
// controller-runtime's names and results) and handler runs move as objects are handled,
// retried, fail for good and fail to be written; the connection budget and the process
// figures are there from the start.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { PermanentError, Registry, TemporaryError } from "../../src/declaring/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";
import { eventPoll, parseExposition as parse } from "./scrape.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

test("reconciles and handler runs on /metrics change as objects are handled, retried, fail permanently and fail to be written", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ name, retry }) => {
    if (name.startsWith("retry") && retry === 0) throw new TemporaryError("not yet", { delay: 0.05 });
    if (name.startsWith("fail")) throw new PermanentError("never");
  }, { id: "c" });
  const stop = new AbortController();
  let probeUrl: string | undefined;
  const running = run({
    signal: stop.signal, client: e.client, registry, logger: testLogger().logger,
    settings: resolveSettings({ flags: { namespaces: ["default"], standalone: true, liveness: "http://127.0.0.1:0/healthz" } }),
    onStarted: (info) => (probeUrl = info.probeUrl),
  });
  let last = new Map<string, number>();
  const scrape = async () => (last = parse(await (await fetch(probeUrl!.replace(/\/healthz$/, "/metrics"))).text()));
  const value = (series: string) => last.get(series) ?? 0;
  const create = (name: string) => fetch(`${e.sandbox.url}/api/v1/namespaces/default/configmaps`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name } }),
  });
  const runs = (outcome: string) => `kobun_handler_runs_total{controller="configmaps",handler="c",cause="create",outcome="${outcome}"}`;
  const reconciles = (result: string) => `controller_runtime_reconcile_total{controller="configmaps",result="${result}"}`;
  try {
    await eventually(() => probeUrl !== undefined, "the operator to start");
    await scrape();
    expect(value(runs("success"))).toBe(0);
    expect(value("kobun_watch_streams_open")).toBeGreaterThanOrEqual(1);
    expect(value("kobun_watch_connection_budget")).toBeGreaterThan(0);
    expect(value("process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(value('controller_runtime_max_concurrent_reconciles{controller="configmaps"}')).toBe(100);
    // Every result there at 0 before any cycle, as controller-runtime exposes them: rate() reads 0, not no data.
    for (const result of ["success", "error", "requeue", "requeue_after"]) expect(last.get(reconciles(result))).toBe(0);

    await create("ok-1");
    await create("ok-2");
    await eventPoll(scrape, () => value(runs("success")) === 2, "two successes");
    await create("retry-1");
    // A reconcile ends after its handlers' runs are counted (its PATCH is between): wait for it.
    await eventPoll(scrape, () => value(reconciles("success")) === 3, "the retried object's reconcile to succeed");
    expect(value(runs("success"))).toBe(3);
    expect(value(runs("retry"))).toBe(1);
    // The retry asked for a delay: requeue_after, then success.
    expect(value(reconciles("requeue_after"))).toBe(1);
    await create("fail-1");
    await eventPoll(scrape, () => value(runs("failure")) === 1, "the permanent failure");
    expect(value(runs("success"))).toBe(3);
    // fail-1's runs are counted before its PATCH is sent: armed before that PATCH, the fault below
    // would refuse it instead of ok-3's. Its worker idle, the PATCH is through.
    await eventPoll(scrape, () => value('controller_runtime_active_workers{controller="configmaps"}') === 0, "fail-1's worker to be idle");
    // A cycle whose PATCH the server refuses is an error, and is retried.
    e.sandbox.faults.failNext(1, 500, { verb: "patch", plural: "configmaps" });
    await create("ok-3");
    await eventPoll(scrape, () => value(runs("success")) >= 5, "ok-3 handled again after the failed write");
    expect(value(reconciles("error"))).toBe(1);
    expect(value('controller_runtime_reconcile_errors_total{controller="configmaps"}')).toBe(1);
    expect(value("kobun_processing_failures_total")).toBe(1);
    await eventPoll(scrape, () => value('controller_runtime_active_workers{controller="configmaps"}') === 0, "every worker to be idle");
    expect(value('kobun_handler_duration_seconds_count{controller="configmaps",handler="c"}')).toBe(value(runs("success")) + 2);
    expect(value("kobun_healthy")).toBe(1);
  } finally {
    stop.abort();
    await running;
  }
}, 60_000); // above the sum of its waits (10 s each), so a slow phase fails with its own name
