// Ownership is exclusive (DESIGN, behaviour 4; issue 11, defect 2): a freeze aborts the signal
// of every handler running in the frozen scope at once, nothing is written for them afterwards,
// and a handler that ignores its signal is abandoned after the grace period and named. The
// relist on resume brings the object back and it is handled again.

import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { freezeManually, resumeManually } from "../../src/peering/index.ts";
import type { Health } from "../../src/observability/health.ts";
import { run } from "../../src/runtime/operator.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { env, linesAt, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";

let e: Env;
beforeAll(async () => {
  e = await env();
  await post("/api/v1/namespaces", { metadata: { name: "elsewhere" } });
});
afterAll(() => e.stop());
// Stopped even when a test fails, so that no operator of one test writes into the next one.
const operators: { stop: AbortController; running: Promise<unknown> }[] = [];
afterEach(async () => {
  for (const { stop, running } of operators.splice(0)) {
    stop.abort();
    await running;
  }
});

async function post(path: string, body: unknown): Promise<void> {
  const response = await fetch(`${e.sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(response.status).toBe(201);
}

const stored = (namespace: string, name: string) => e.sandbox.store.get("", "configmaps", namespace, name);
const patchesOf = (name: string) => e.sandbox.stats.log.filter((r) => r.verb === "patch" && r.path.endsWith(`/configmaps/${name}`)).length;

/** Resolves when the signal aborts, or after `ms` (a handler that honours its signal, bounded). */
function abortedWithin(signal: AbortSignal, ms: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve(performance.now())), { once: true });
  });
}

function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

test("a manual freeze aborts the running handler's signal within milliseconds, only in its namespace, and its PATCH is never written", async () => {
  const registry = new Registry();
  const calls: string[] = [];
  const inDefault = deferred<number | undefined>();
  const defaultStarted = deferred();
  const elsewhereStarted = deferred<AbortSignal>();
  const releaseElsewhere = deferred();
  registry.on.create("v1/configmaps", async ({ namespace, signal, patch }) => {
    calls.push(namespace!);
    if (namespace === "elsewhere") {
      elsewhereStarted.resolve(signal);
      await releaseElsewhere.promise;
      patch.data = { written: "elsewhere" };
      return;
    }
    if (calls.filter((ns) => ns === "default").length === 1) {
      defaultStarted.resolve();
      // Honours its signal, and even returns a result afterwards: that result must not be written.
      inDefault.resolve(await abortedWithin(signal, 5000));
      patch.data = { written: "after the freeze" };
      return { stoppedAt: "freeze" };
    }
    patch.data = { written: "after the resume" };
  }, { id: "slow", labels: { scenario: "manual" } });
  const { logger, lines } = testLogger();
  const stop = new AbortController();
  operators.push({ stop, running: run({
    signal: stop.signal, client: e.client, registry, logger, peerId: "operator",
    settings: resolveSettings({ flags: { namespaces: ["default", "elsewhere"], priority: 0 } }),
  }) });
  const labels = { scenario: "manual" };
  await post("/api/v1/namespaces/default/configmaps", { metadata: { name: "held", labels } });
  await post("/api/v1/namespaces/elsewhere/configmaps", { metadata: { name: "untouched", labels } });
  await defaultStarted.promise;
  const otherSignal = await elsewhereStarted.promise;

  // Measured from the start of `kobun freeze`'s write: the operator sees it through its peering watch.
  const frozenAt = performance.now();
  await freezeManually({ client: e.client, name: "default", namespace: "default", group: "kobun.dev", lifetime: 60 });
  const abortedAt = await inDefault.promise;
  expect(abortedAt).toBeDefined();
  const latency = abortedAt! - frozenAt;
  console.log(`manual freeze started → handler signal aborted: ${latency.toFixed(1)} ms`);
  expect(latency).toBeLessThan(1000);
  await eventually(() => lines.some((l) => l.includes("the cycle's results are not written") && l.includes("name=held")), "the frozen cycle to be discarded");
  expect(patchesOf("held")).toBe(0);
  expect(stored("default", "held")?.data ?? {}).toEqual({});
  // The other namespace has a gate of its own: its handler runs on and its result is written.
  expect(otherSignal.aborted).toBe(false);
  releaseElsewhere.resolve();
  await eventually(() => stored("elsewhere", "untouched")?.data?.written === "elsewhere", "the other namespace's handler to write");

  await resumeManually({ client: e.client, name: "default", namespace: "default", group: "kobun.dev" });
  await eventually(() => stored("default", "held")?.data?.written === "after the resume", "the object to be handled again after the resume", 10_000);
  // The two namespaces' first calls may come in either order.
  expect(calls.filter((ns) => ns === "default")).toHaveLength(2);
  expect(calls.filter((ns) => ns === "elsewhere")).toHaveLength(1);
  expect(linesAt(lines, "WARN").filter((l) => l.includes("abandoned"))).toEqual([]);
}, 20_000);

test("a handler that ignores its signal is abandoned after the grace period, named in the log, and its result is not written", async () => {
  const registry = new Registry();
  let calls = 0;
  const started = deferred();
  const ended = deferred();
  registry.on.create("v1/configmaps", async ({ patch }) => {
    if (++calls > 1) {
      patch.data = { written: "after the resume" };
      return;
    }
    started.resolve();
    await Bun.sleep(1500); // the handler's own slow work, deaf to its signal: what is under test
    patch.data = { written: "by the abandoned handler" };
    ended.resolve();
    return { late: true };
  }, { id: "deaf", labels: { scenario: "deaf" } });
  const toggle = new Toggle();
  const { logger, lines } = testLogger();
  const stop = new AbortController();
  let health: Health | undefined;
  const running = run({
    signal: stop.signal, client: e.client, registry, logger, toggle,
    settings: resolveSettings({ fileData: { peering: { freezeGracePeriod: "200ms" } }, flags: { namespaces: ["default"], standalone: true } }),
    onStarted: (info) => (health = info.health),
  });
  operators.push({ stop, running });
  await post("/api/v1/namespaces/default/configmaps", { metadata: { name: "deaf", labels: { scenario: "deaf" } } });
  await started.promise;
  toggle.freeze("test", "another operator took over");
  const frozenAt = performance.now();
  const abandonedLine = () => linesAt(lines, "WARN").find((l) => l.includes("abandoned a handler"));
  await eventually(() => abandonedLine() !== undefined, "the deaf handler to be abandoned", 1200);
  const after = performance.now() - frozenAt;
  expect(after).toBeGreaterThanOrEqual(190);
  expect(abandonedLine()).toContain("deaf on default/deaf");
  expect(abandonedLine()).toContain("name=deaf");
  expect(health!.exposition()).toContain("\nkobun_handlers_abandoned_total 1\n");

  await ended.promise;
  await eventually(() => lines.some((l) => l.includes("the cycle's results are not written") && l.includes("name=deaf")), "the abandoned cycle's end to be discarded");
  expect(patchesOf("deaf")).toBe(0);
  expect(stored("default", "deaf")?.data ?? {}).toEqual({});

  toggle.unfreeze("test");
  await eventually(() => stored("default", "deaf")?.data?.written === "after the resume", "the object to be handled again after the resume");
  expect(calls).toBe(2);
  stop.abort();
  expect((await running).abandoned).toEqual([]);
}, 15_000);
