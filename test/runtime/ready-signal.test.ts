// The operator's signals (issue 33): onReady and "operator ready" once every watch's initial LIST
// was processed (an object created after it arrives as added, not listed; onStarted still fires
// when the watches start); a success line for on.event handlers (Kopf's "Handler 'x' succeeded.");
// a warning when the operator has no handlers at all.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { configmaps, env, testLogger, type Env } from "../peering/helpers.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

const settings = () => resolveSettings({ flags: { namespaces: ["default"], standalone: true } });
const configMap = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels: { scenario: "ready" } } });

test("onReady comes after the initial LIST was handled: what existed arrives as listed before it, what is created after it as added", async () => {
  await e.client.create(configmaps, "default", configMap("ready-before"));
  const registry = new Registry();
  const seen: string[] = [];
  const added = Promise.withResolvers<void>();
  registry.on.event("v1/configmaps", ({ name, type }) => {
    seen.push(`${type} ${name}`);
    if (name === "ready-after") added.resolve();
  }, { id: "watcher", labels: { scenario: "ready" } });
  const { logger, lines } = testLogger();
  const stop = new AbortController();
  const ready = Promise.withResolvers<void>();
  const order: string[] = [];
  const operator = run({
    signal: stop.signal, client: e.client, registry, logger, settings: settings(),
    onStarted: () => order.push("started"),
    onReady: () => {
      order.push(`ready after [${seen.join(", ")}]`);
      ready.resolve();
    },
  });
  try {
    await ready.promise;
    await e.client.create(configmaps, "default", configMap("ready-after"));
    await added.promise;
    expect(order).toEqual(["started", "ready after [listed ready-before]"]);
    expect(seen).toEqual(["listed ready-before", "added ready-after"]);
    const started = lines.findIndex((l) => l.includes("operator started"));
    const readyLine = lines.findIndex((l) => l.includes("operator ready"));
    expect(started).toBeGreaterThanOrEqual(0);
    expect(readyLine).toBeGreaterThan(started);
  } finally {
    stop.abort();
    await operator;
  }
  // Kopf's success line, one per event handled (its e2e counts them); written once the handler returned.
  const successes = lines.filter((l) => l.includes("Handler 'watcher' succeeded."));
  expect(successes).toHaveLength(2);
  expect(successes[1]).toContain("name=ready-after");
});

test("an operator with no handlers at all warns that it watches nothing; one with handlers does not", async () => {
  for (const withHandlers of [false, true]) {
    const registry = new Registry();
    registry.on.startup(() => {}, { id: "hello" });
    if (withHandlers) registry.on.create("v1/configmaps", () => {}, { id: "noop", labels: { scenario: "none" } });
    const { logger, lines } = testLogger();
    const stop = new AbortController();
    const ready = Promise.withResolvers<void>();
    const operator = run({ signal: stop.signal, client: e.client, registry, logger, settings: settings(), onReady: () => ready.resolve() });
    await ready.promise;
    stop.abort();
    await operator;
    const warning = lines.filter((l) => l.includes("no handlers registered"));
    if (withHandlers) expect(warning).toEqual([]);
    else {
      expect(warning).toHaveLength(1);
      expect(warning[0]).toContain("WARN");
      expect(warning[0]).toContain("on.startup hello");
    }
  }
});

test("namespaces by glob: not ready before the namespaces are listed and their objects handled", async () => {
  await e.client.create(configmaps, "default", { ...configMap("glob-before"), metadata: { name: "glob-before", labels: { scenario: "glob" } } });
  const registry = new Registry();
  const seen: string[] = [];
  registry.on.event("v1/configmaps", ({ name, type }) => void seen.push(`${type} ${name}`), { id: "globbed", labels: { scenario: "glob" } });
  const { logger } = testLogger();
  const stop = new AbortController();
  const ready = Promise.withResolvers<string[]>();
  const operator = run({
    signal: stop.signal, client: e.client, registry, logger,
    settings: resolveSettings({ flags: { namespaces: ["def*"], standalone: true } }),
    onReady: () => ready.resolve([...seen]),
  });
  try {
    // The namespace follower's LIST starts the streams of "default"; their LIST is handled before ready.
    expect(await ready.promise).toEqual(["listed glob-before"]);
  } finally {
    stop.abort();
    await operator;
  }
}, 20_000);
