// /readyz means the operator has seen and handled what is there: ready once every stream's
// initial list was processed once, unready while frozen (unless `frozen-is-ready`); a freeze
// shows on /metrics as kobun_frozen and as a watch restart for reason "freeze". /healthz
// fails while the event loop was blocked past its limit. All read over HTTP.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { Health } from "../../src/observability/health.ts";
import { startProbeServer } from "../../src/observability/probes.ts";
import { run } from "../../src/runtime/operator.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

const createConfigMap = (namespace: string, name: string) => fetch(`${e.sandbox.url}/api/v1/namespaces/${namespace}/configmaps`, {
  method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name } }),
});
const ensureNamespace = (name: string) => fetch(`${e.sandbox.url}/api/v1/namespaces`, {
  method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name } }),
});

async function get(url: string): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(url);
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

/** Scrapes until `pred` holds on the answer; bounded (the only way to see a probe change). */
async function until(url: string, pred: (r: { status: number; body: any; text: string }) => boolean, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await get(url);
    if (pred(r)) return r;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${r.status} ${r.text.slice(0, 500)}`);
    await Bun.sleep(20);
  }
}

test("/readyz is 503 until the listed objects were handled once, 503 while frozen, and kobun_frozen shows the freeze", async () => {
  await ensureNamespace("ready-a");
  expect((await createConfigMap("ready-a", "listed")).status).toBe(201);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started = false;
  const registry = new Registry();
  registry.on.create("v1/configmaps", async () => {
    started = true;
    await released;
  }, { id: "slow" });
  const toggle = new Toggle();
  const stop = new AbortController();
  let probeUrl: string | undefined;
  const running = run({
    signal: stop.signal, client: e.client, registry, logger: testLogger().logger, toggle,
    settings: resolveSettings({ flags: { namespaces: ["ready-a"], standalone: true, liveness: "http://127.0.0.1:0/healthz" } }),
    onStarted: (info) => (probeUrl = info.probeUrl),
  });
  try {
    await eventually(() => probeUrl !== undefined && started, "the listed object's handler to start");
    const readyz = probeUrl!.replace(/\/healthz$/, "/readyz");
    const metrics = probeUrl!.replace(/\/healthz$/, "/metrics");
    const waiting = await get(readyz);
    expect(waiting.status).toBe(503);
    expect(waiting.body).toEqual({ ready: false, waiting: ["watch configmaps in ready-a"], frozen: {} });
    release();
    await until(readyz, (r) => r.status === 200, "ready once the listed object was handled");
    expect((await get(readyz)).body).toEqual({ ready: true, waiting: [], frozen: {} });
    expect((await get(metrics)).text).toContain('kobun_frozen{scope="operator"} 0\n');

    toggle.freeze("test", "a peer of higher priority");
    const frozen = await until(readyz, (r) => r.status === 503, "unready while frozen");
    expect(frozen.body).toEqual({ ready: false, waiting: [], frozen: { test: "a peer of higher priority" } });
    const scraped = (await until(metrics, (r) => r.text.includes('reason="freeze"'), "the freeze restart")).text;
    expect(scraped).toContain('kobun_frozen{scope="operator"} 1\n');
    expect(scraped).toContain('kobun_watch_restarts_total{resource="configmaps",reason="freeze"} 1\n');
    toggle.unfreeze("test");
    await until(readyz, (r) => r.status === 200, "ready again after the resume");
  } finally {
    release();
    stop.abort();
    await running;
  }
}, 20_000);

test("with readiness frozen-is-ready, a standby frozen from the start is ready though it listed nothing", async () => {
  const toggle = new Toggle();
  toggle.freeze("lease", "another replica holds the lease");
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "noop" });
  const stop = new AbortController();
  let probeUrl: string | undefined;
  const running = run({
    signal: stop.signal, client: e.client, registry, logger: testLogger().logger, toggle,
    settings: resolveSettings({
      fileData: { probes: { readiness: "frozen-is-ready" } },
      flags: { namespaces: ["default"], standalone: true, liveness: "http://127.0.0.1:0/healthz" },
    }),
    onStarted: (info) => (probeUrl = info.probeUrl),
  });
  try {
    await eventually(() => probeUrl !== undefined, "the operator to start");
    const r = await get(probeUrl!.replace(/\/healthz$/, "/readyz"));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ready: true, waiting: ["watch configmaps in default"], frozen: { lease: "another replica holds the lease" } });
  } finally {
    stop.abort();
    await running;
  }
});

test("--metrics-addr serves /metrics on a listener of its own, beside the probes", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "noop" });
  const stop = new AbortController();
  const { logger, lines } = testLogger();
  const running = run({
    signal: stop.signal, client: e.client, registry, logger,
    settings: resolveSettings({ flags: { namespaces: ["default"], standalone: true, metricsAddr: "127.0.0.1:0" } }),
  });
  try {
    await eventually(() => lines.some((l) => l.includes("serving metrics")), "the metrics listener");
    const url = /url=(\S+)/.exec(lines.find((l) => l.includes("serving metrics"))!)![1]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const text = (await until(url, (r) => /rest_client_requests_total\{code="200",method="GET"/.test(r.text), "the operator's LIST on /metrics")).text;
    expect(text).toContain("kobun_watch_streams_open 1\n");
  } finally {
    stop.abort();
    await running;
  }
});

test("/healthz fails, naming the event loop, while it was blocked past the limit", async () => {
  const health = new Health();
  const probes = startProbeServer("http://127.0.0.1:0", health, { eventLoopLimitS: 0.2 });
  try {
    expect((await get(probes.url)).status).toBe(200);
    Bun.sleepSync(400); // the fault under test: a synchronous handler holding the loop
    const r = await until(probes.url, (x) => x.status === 503, "the blocked loop to be reported", 5000);
    expect(r.body.problems["event loop"]).toMatch(/^blocked for \d+\.\d s at once at .* \(limit 0\.2 s\): a handler runs synchronous work$/);
    const metrics = (await get(probes.url.replace("/healthz", "/metrics"))).text;
    const bucket = (le: string) => Number(metrics.split("\n").find((l) => l.startsWith(`kobun_event_loop_lag_seconds_bucket{le="${le}"} `))?.split(" ")[1]);
    // The 0.4 s block is a lag above 0.25 s; a busy machine may run the timer later still, so
    // no upper bucket is assumed.
    expect(bucket("+Inf") - bucket("0.25")).toBeGreaterThanOrEqual(1);
  } finally {
    await probes.stop();
  }
});
