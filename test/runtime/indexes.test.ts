// Indexes in the running operator (issue 13): a handler of one resource reads the index of
// another (the runtime watches what the indexes need, though nothing handles it); the index
// is updated before the handlers of the same event; after a freeze and a relist it holds
// exactly the objects that exist (the deleted one gone, the new one in, nothing twice).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import type { Index } from "../../src/declaring/indexes.ts";
import { run } from "../../src/runtime/operator.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

async function send(method: string, path: string, body?: unknown): Promise<void> {
  const response = await fetch(`${e.sandbox.url}${path}`, { method, headers: { "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
  expect(response.ok).toBe(true);
}
const secret = (name: string, owner: string) => send("POST", "/api/v1/namespaces/default/secrets", { metadata: { name, labels: { owner } } });
const configMap = (name: string) => send("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name, labels: { scenario: "index" } } });

test("a configmap handler reads the secrets' index; the index is current before the same event's handlers; a relist rebuilds it without duplicates", async () => {
  const registry = new Registry();
  registry.on.index("v1/secrets", ({ name, labels }) => (labels.owner ? { [labels.owner]: name } : undefined), { id: "secretsByOwner" });
  registry.on.index("v1/configmaps", ({ name }) => ({ [name]: true }), { id: "configMaps", labels: { scenario: "index" } });
  const seen = new Map<string, { secrets: unknown[]; self: unknown[] }>();
  let live: Readonly<Record<string, Index>> | undefined;
  // Nothing handles secrets: they are watched only because an index needs them.
  registry.on.create("v1/configmaps", ({ name, indexes }) => {
    live = indexes;
    seen.set(name, { secrets: indexes.secretsByOwner!.get(name), self: indexes.configMaps!.get(name) });
  }, { id: "read", labels: { scenario: "index" } });
  const toggle = new Toggle();
  const stop = new AbortController();
  const operator = run({
    signal: stop.signal, client: e.client, registry, logger: testLogger().logger, toggle,
    settings: resolveSettings({ flags: { namespaces: ["default"], standalone: true } }),
  });
  try {
    await secret("s1", "app");
    await secret("s2", "app");
    await secret("s3", "other");
    // Both watches must have listed the secrets before the configmap's handler reads them.
    await configMap("warmup");
    await eventually(() => live?.secretsByOwner?.get("app").length === 2 && live.secretsByOwner.get("other").length === 1, "the secrets to be indexed");
    await configMap("app");
    await eventually(() => seen.has("app"), "the configmap's handler");
    expect(seen.get("app")).toEqual({ secrets: ["s1", "s2"], self: [true] });

    toggle.freeze("test", "relist");
    await send("DELETE", "/api/v1/namespaces/default/secrets/s1");
    await secret("s4", "app");
    toggle.unfreeze("test");
    await configMap("app2");
    await eventually(() => seen.has("app2"), "the second configmap's handler");
    const index = live!.secretsByOwner!;
    await eventually(() => index.get("app").length === 2 && index.get("app").includes("s4"), "the relisted index");
    expect([...index].map(([k, v]) => [k, [...v].sort()])).toEqual([["app", ["s2", "s4"]], ["other", ["s3"]]]);
  } finally {
    stop.abort();
    await operator;
  }
}, 20_000);

test("handlers wait for every index's first LIST: a configmap handler at start-up sees all the secrets that existed before, even when their LIST is slow", async () => {
  await secret("early-1", "early");
  await secret("early-2", "early");
  await secret("early-3", "early");
  await send("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "early", labels: { scenario: "index-early" } } });
  const registry = new Registry();
  registry.on.index("v1/secrets", ({ name, labels }) => (labels.owner ? { [labels.owner]: name } : undefined), { id: "secretsByOwner" });
  const firstRun: unknown[][] = [];
  registry.on.create("v1/configmaps", ({ indexes }) => {
    firstRun.push(indexes.secretsByOwner!.get("early"));
  }, { id: "read-early", labels: { scenario: "index-early" } });
  const ticks: unknown[][] = [];
  registry.on.timer("v1/configmaps", ({ indexes }) => {
    ticks.push(indexes.secretsByOwner!.get("early"));
  }, { id: "tick-early", interval: 0.05, finalizer: false, labels: { scenario: "index-early" } });
  // The secrets' initial list (a watch with sendInitialEvents) answers late: the configmaps' comes first.
  e.sandbox.faults.stallNext(1, 400, { verb: "watch", plural: "secrets" });
  const stop = new AbortController();
  const operator = run({
    signal: stop.signal, client: e.client, registry, logger: testLogger().logger,
    settings: resolveSettings({ flags: { namespaces: ["default"], standalone: true } }),
  });
  try {
    await eventually(() => firstRun.length > 0 && ticks.length > 0, "the configmap's handler and timer");
    expect(firstRun[0]).toEqual(["early-1", "early-2", "early-3"]);
    expect(ticks[0]).toEqual(["early-1", "early-2", "early-3"]);
  } finally {
    stop.abort();
    await operator;
  }
}, 20_000);
