// Lease mode, issue 11 defect 2: a holder whose connection to the API server is cut freezes at
// its renew deadline and stops its handlers within the freeze grace, before its lease can
// expire, so the standby that takes over never runs the same handler on the same object while
// the cut-off holder is still inside it. Each replica talks to the sandbox through its own TCP
// proxy; the holder's proxy is blackholed mid-handler (requests hang, no error comes back).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/handling/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { run } from "../../src/runtime/operator.ts";
import { sleep } from "../../src/util/abort.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { env, linesAt, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.ts";

let e: Env;
beforeAll(async () => (e = await env({ crds: [] })));
afterAll(() => e.stop());

const LEASE = { duration: "3s", renewDeadline: "2s", retryPeriod: "250ms" };

/** When a replica's handler started and ended (performance clock), and its start by the wall clock (log lines carry that). */
interface Span { replica: string; start: number; end?: number; startedAt: number }

interface Replica {
  id: string;
  proxy: TcpProxy;
  toggle: Toggle;
  lines: string[];
  stop(): Promise<void>;
}

/** One in-process operator in lease mode, behind a proxy of its own, running `handler` on labelled configmaps. */
async function replica(id: string, scenario: string, grace: string, handler: (signal: AbortSignal) => Promise<void>, spans: Span[]): Promise<Replica> {
  const proxy = startTcpProxy(new URL(e.sandbox.url));
  const dir = mkdtempSync(join(tmpdir(), "kobun-lease-overlap-"));
  const kubeconfig = join(dir, "kubeconfig.yaml");
  writeFileSync(kubeconfig, proxy.kubeconfig(e.sandbox.kubeconfig, e.sandbox.url), { mode: 0o600 });
  const client = await KubeClient.connect({ kubeconfig });
  const registry = new Registry();
  registry.on.create("v1/configmaps", async ({ signal }) => {
    const span: Span = { replica: id, start: performance.now(), startedAt: Date.now() };
    spans.push(span);
    try {
      await handler(signal);
    } finally {
      span.end = performance.now();
    }
  }, { id: "nine-seconds", labels: { scenario } });
  const toggle = new Toggle();
  const { logger, lines } = testLogger();
  const controller = new AbortController();
  const settings = resolveSettings({
    fileData: { peering: { mode: "lease", name: scenario, freezeGracePeriod: grace, lease: LEASE }, shutdown: { gracePeriod: "1s" } },
    flags: { namespaces: ["default"] },
  });
  const running = run({ signal: controller.signal, client, registry, toggle, logger, settings, peerId: id });
  return {
    id, proxy, toggle, lines,
    async stop() {
      controller.abort();
      await running;
      client.close();
      proxy.close();
    },
  };
}

/** Starts the holder, then the standby, then the object whose handler the holder runs; cuts the holder off. */
async function cutOffMidHandler(scenario: string, grace: string, handler: (signal: AbortSignal) => Promise<void>) {
  const spans: Span[] = [];
  const holder = await replica("holder", scenario, grace, handler, spans);
  // Not the toggle: it runs until the election starts (after the resources are resolved).
  await eventually(() => holder.lines.some((l) => l.includes("acquired the lease")), "the first replica to hold the lease");
  const standby = await replica("standby", scenario, grace, handler, spans);
  await eventually(() => standby.lines.some((l) => l.includes("standing by")), "the second replica to stand by");
  const response = await fetch(`${e.sandbox.url}/api/v1/namespaces/default/configmaps`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ metadata: { name: scenario, labels: { scenario } } }),
  });
  expect(response.status).toBe(201);
  await eventually(() => spans.some((s) => s.replica === "holder"), "the holder's handler to start");
  holder.proxy.blackhole();
  const cutAt = performance.now();
  return { spans, holder, standby, cutAt };
}

test("a lease holder cut off from the API server stops its running handler before the standby starts it (zero overlap)", async () => {
  // A 9-second handler that honours its signal.
  const { spans, holder, standby, cutAt } = await cutOffMidHandler("honours", "500ms", (signal) => sleep(9000, signal).then(() => {}));
  try {
    await eventually(() => spans.some((s) => s.replica === "standby"), "the standby to start the handler", 10_000);
    await eventually(() => spans.every((s) => s.replica !== "holder" || s.end !== undefined), "the holder's handler to end", 10_000);
    const first = spans.find((s) => s.replica === "holder")!;
    const second = spans.find((s) => s.replica === "standby")!;
    const overlap = Math.max(0, first.end! - second.start);
    console.log(`cut → holder's handler ended ${(first.end! - cutAt).toFixed(0)} ms; cut → standby's started ${(second.start - cutAt).toFixed(0)} ms; overlap ${overlap.toFixed(0)} ms (gap ${(second.start - first.end!).toFixed(0)} ms)`);
    expect(overlap).toBe(0);
    expect(linesAt(holder.lines, "WARN").some((l) => l.includes("lost the lease: freezing"))).toBe(true);
    expect(linesAt(holder.lines, "WARN").filter((l) => l.includes("abandoned"))).toEqual([]);
  } finally {
    await standby.stop();
    await holder.stop();
  }
}, 30_000);

test("a cut-off holder names a handler that ignores its signal, after the grace and before the lease can expire", async () => {
  const { spans, holder, standby, cutAt } = await cutOffMidHandler("deaf", "300ms", () => Bun.sleep(6000)); // deaf to its signal
  try {
    await eventually(() => spans.some((s) => s.replica === "standby"), "the standby to start the handler", 10_000);
    const second = spans.find((s) => s.replica === "standby")!;
    const warned = linesAt(holder.lines, "WARN").find((l) => l.includes("abandoned a handler"));
    expect(warned).toContain("nine-seconds on default/deaf");
    // Named before the standby could start: the holder's own log says which overlap is coming.
    const abandonedAt = Date.parse(warned!.split(" ")[0]!);
    expect(abandonedAt).toBeLessThan(second.startedAt);
    console.log(`deaf handler: cut → standby's start ${(second.start - cutAt).toFixed(0)} ms; abandoned and named ${second.startedAt - abandonedAt} ms before it`);
  } finally {
    await standby.stop();
    await holder.stop();
  }
}, 30_000);
