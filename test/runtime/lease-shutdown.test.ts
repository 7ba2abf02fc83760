// Lease mode, a stop that takes longer than the lease: the holder hands the lease over only once its
// handlers have finished (peering/lease.ts, beforeLeave), and it keeps renewing the lease while they
// do, so a `shutdown.gracePeriod` longer than `peering.lease.duration` does not let the standby take
// over, and start the same handler on the same object, while the holder is still inside it.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { run } from "../../src/runtime/operator.ts";
import { Logger, memorySink } from "../../src/util/log.ts";
import { configmaps as CONFIGMAPS, env, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";

let e: Env;
beforeAll(async () => (e = await env({ crds: [] })));
afterAll(() => e.stop());

/** Performance-clock start and end, and the end by the wall clock (log lines carry that). */
interface Span { replica: string; start: number; end?: number; endedAt?: number }

/** A replica whose handler, once its signal aborts, takes `windDownMs` more (longer than the lease's duration). */
async function replica(id: string, spans: Span[], windDownMs: number) {
  const client = await KubeClient.connect({ kubeconfig: e.sandbox.kubeconfigPath });
  const registry = new Registry();
  registry.on.create("v1/configmaps", async ({ signal }) => {
    const span: Span = { replica: id, start: performance.now() };
    spans.push(span);
    try {
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      await Bun.sleep(windDownMs);
    } finally {
      span.end = performance.now();
      span.endedAt = Date.now();
    }
  }, { id: "slow-stop" });
  const settings = resolveSettings({
    fileData: {
      peering: { mode: "lease", name: "slow-stop", freezeGracePeriod: "300ms", lease: { duration: "2s", renewDeadline: "1s", retryPeriod: "200ms" } },
      shutdown: { gracePeriod: "6s" },
    },
    flags: { namespaces: ["default"] },
  });
  const stop = new AbortController();
  const sink = memorySink("debug");
  const running = run({ signal: stop.signal, client, registry, logger: new Logger(sink), settings, peerId: id });
  return {
    lines: sink.lines,
    async stop() {
      stop.abort();
      const report = await running;
      client.close();
      return report;
    },
  };
}

test("a lease holder stopping with a handler that winds down past the lease's duration keeps the lease until it ended", async () => {
  const spans: Span[] = [];
  const holder = await replica("holder", spans, 3000);
  let standby: Awaited<ReturnType<typeof replica>> | undefined;
  try {
    await eventually(() => holder.lines.some((l) => l.includes("acquired the lease")), "the holder to acquire the lease", 10_000);
    standby = await replica("standby", spans, 0);
    await eventually(() => standby!.lines.some((l) => l.includes("standing by")), "the standby to stand by", 10_000);
    await e.client.create(CONFIGMAPS, "default", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "winding" } });
    await eventually(() => spans.some((s) => s.replica === "holder"), "the holder's handler to start", 10_000);
    const report = await holder.stop();
    expect(report.abandoned).toEqual([]);
    const first = spans.find((s) => s.replica === "holder")!;
    // Whatever the standby ran after the takeover began after the holder's handler had ended.
    for (const span of spans.filter((s) => s.replica === "standby")) expect(span.start).toBeGreaterThanOrEqual(first.end!);
    await eventually(() => standby!.lines.some((l) => l.includes("acquired the lease")), "the standby to take the lease over", 10_000);
    const acquired = standby.lines.find((l) => l.includes("acquired the lease"))!;
    expect(Date.parse(acquired.split(" ")[0]!)).toBeGreaterThanOrEqual(first.endedAt!);
  } finally {
    await standby?.stop();
  }
}, 40_000);
