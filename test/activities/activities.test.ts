// Activities (issue 13): on.startup runs before any watch and shares its memo with every
// handler; a failing one stops run() with exit code 6 and its name, having opened no watch;
// on.cleanup runs after the handlers stopped, with the same memo.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { PermanentError, Registry } from "../../src/declaring/index.ts";
import { FatalError } from "../../src/runtime/exits.ts";
import { run } from "../../src/runtime/operator.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "../runtime/helpers.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

const settings = () => resolveSettings({ flags: { namespaces: ["default"], standalone: true } });
const watches = () => e.sandbox.stats.log.filter((r) => r.query.includes("watch=")).length;

test("on.startup runs before any watch and its memo reaches the handlers; on.cleanup runs after the handlers stopped", async () => {
  const registry = new Registry();
  const order: string[] = [];
  registry.on.startup(async ({ memo }) => {
    order.push(`startup watches=${watches() - before}`);
    memo.greeting = "hi";
  });
  let handlerSignal: AbortSignal | undefined;
  registry.on.create("v1/configmaps", async ({ memo, signal, name }) => {
    order.push(`create ${name} ${memo.greeting}`);
    handlerSignal = signal;
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    order.push("handler stopped");
  }, { id: "greet", labels: { scenario: "activities" } });
  registry.on.cleanup(({ memo }) => {
    order.push(`cleanup ${memo.greeting} handler-aborted=${handlerSignal?.aborted}`);
  });
  const before = watches();
  const stop = new AbortController();
  const operator = run({ signal: stop.signal, client: e.client, registry, logger: testLogger().logger, settings: settings() });
  const response = await fetch(`${e.sandbox.url}/api/v1/namespaces/default/configmaps`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name: "act", labels: { scenario: "activities" } } }),
  });
  expect(response.status).toBe(201);
  await eventually(() => order.includes("create act hi"), "the handler to see the startup's memo");
  stop.abort();
  await operator;
  expect(watches()).toBeGreaterThan(before); // the count does see the operator's watches
  expect(order).toEqual(["startup watches=0", "create act hi", "handler stopped", "cleanup hi handler-aborted=true"]);
});

test("an on.startup that fails for good (PermanentError) stops run() with exit code 6, naming the handler, before any watch", async () => {
  const registry = new Registry();
  let attempts = 0;
  registry.on.startup(function connectToVault() {
    attempts++;
    throw new PermanentError("vault is sealed");
  }, { backoff: 0 });
  registry.on.create("v1/configmaps", () => {}, { id: "never" });
  const before = watches();
  const failure = await run({ client: e.client, registry, logger: testLogger().logger, settings: settings() }).catch((error) => error);
  expect(failure).toBeInstanceOf(FatalError);
  expect(failure.exitCode).toBe(6);
  expect(failure.message).toBe("startup handler connectToVault failed: vault is sealed");
  expect(watches()).toBe(before);
  expect(attempts).toBe(1);
});

test("on.probe values appear in /healthz under probes.<id>, cached for cacheFor; a failing one reports its error and the operator stays healthy", async () => {
  const registry = new Registry();
  let asked = 0;
  registry.on.probe(() => ++asked, { id: "asked", cacheFor: 60 });
  registry.on.probe(() => {
    throw new Error("no queue");
  }, { id: "queue" });
  registry.on.create("v1/configmaps", () => {}, { id: "noop" });
  const stop = new AbortController();
  let probeUrl: string | undefined;
  const operator = run({
    signal: stop.signal, client: e.client, registry, logger: testLogger().logger,
    settings: resolveSettings({ flags: { namespaces: ["default"], standalone: true, liveness: "http://127.0.0.1:0/healthz" } }),
    onStarted: (info) => (probeUrl = info.probeUrl),
  });
  try {
    await eventually(() => probeUrl !== undefined, "the probe server");
    for (let i = 0; i < 2; i++) {
      const response = await fetch(probeUrl!);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ healthy: true, problems: {}, probes: { asked: 1, queue: { error: "no queue" } } });
    }
    expect(asked).toBe(1);
  } finally {
    stop.abort();
    await operator;
  }
});
