// Issue 11, defects 1 and 2 together: above watching.clusterWideAbove one cluster-wide watch
// feeds every namespace, so a namespace's freeze cannot close "its" stream. Its own peering
// gate must still abort the handlers running there (and only there), and nothing is written
// for them; the other namespace's handler runs on and writes. On resume the shared stream relists:
// nothing else would bring back the object whose cycle the freeze abandoned.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { freezeManually, resumeManually } from "../../src/peering/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";

let e: Env;
beforeAll(async () => {
  e = await env();
  for (const ns of ["wide-a", "wide-b"]) await post("/api/v1/namespaces", { metadata: { name: ns } });
});
afterAll(() => e.stop());

async function post(path: string, body: unknown): Promise<void> {
  const response = await fetch(`${e.sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(response.status).toBe(201);
}

const stored = (namespace: string) => e.sandbox.store.get("", "configmaps", namespace, "cm");

test("cluster-wide watch: a namespace's manual freeze aborts the handler running there and writes nothing for it; the resume handles that object again (a relist), the other namespace runs on", async () => {
  const registry = new Registry();
  const signals = new Map<string, AbortSignal>();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let bothStarted!: () => void;
  const started = new Promise<void>((resolve) => (bothStarted = resolve));
  const calls: string[] = [];
  registry.on.create("v1/configmaps", async ({ namespace, signal, patch }) => {
    calls.push(namespace!);
    if (calls.length > 2) return void (patch.data = { written: "after the resume" });
    signals.set(namespace!, signal);
    if (signals.size === 2) bothStarted();
    // Both honour their signal; b's is released by the test.
    await Promise.race([released, new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }))]);
    patch.data = { written: signal.aborted ? "after the freeze" : "by the running handler" };
  }, { id: "slow" });
  const { logger, lines } = testLogger();
  const stop = new AbortController();
  const operator = run({
    signal: stop.signal, client: e.client, registry, logger, peerId: "operator",
    settings: resolveSettings({ fileData: { watching: { clusterWideAbove: 0 } }, flags: { namespaces: ["wide-a", "wide-b"], priority: 0 } }),
  });
  try {
    for (const ns of ["wide-a", "wide-b"]) await post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: "cm" } });
    await started;
    await freezeManually({ client: e.client, name: "default", namespace: "wide-a", group: "kobun.dev", lifetime: 60 });
    await eventually(() => signals.get("wide-a")!.aborted, "the handler in the frozen namespace to be aborted");
    expect(signals.get("wide-b")!.aborted).toBe(false);
    release();
    await eventually(() => stored("wide-b")?.data?.written === "by the running handler", "the other namespace's handler to write");
    await eventually(() => lines.some((l) => l.includes("the cycle's results are not written") && l.includes("namespace=wide-a")), "the frozen cycle to be discarded");
    expect(stored("wide-a")?.data ?? {}).toEqual({});
    await resumeManually({ client: e.client, name: "default", namespace: "wide-a", group: "kobun.dev" });
    await eventually(() => stored("wide-a")?.data?.written === "after the resume", "the frozen namespace to be handled after the resume", 10_000);
  } finally {
    stop.abort();
    await operator;
  }
  expect(lines.filter((l) => /one cluster-wide watch per resource/.test(l))).toHaveLength(1);
}, 20_000);
