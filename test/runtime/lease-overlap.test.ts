// Lease mode, issue 11 defect 2: a holder whose connection to the API server is cut freezes at
// its renew deadline and stops its handlers within the freeze grace, before its lease can
// expire, so the standby that takes over never runs the same handler on the same object while
// the cut-off holder is still inside it. Each replica talks to the sandbox through its own TCP
// proxy; the holder's proxy is blackholed mid-handler (requests hang, no error comes back).
// test/e2e/lease-handover.e2e.ts runs the same on a real kube-apiserver.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { sleep } from "../../src/util/abort.ts";
import { env, linesAt, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";
import { cutOffMidHandler, overlapOf, type ApiServer } from "./lease-replicas.ts";

let e: Env;
let api: ApiServer;
beforeAll(async () => {
  e = await env({ crds: [] });
  api = { url: e.sandbox.url, kubeconfig: e.sandbox.kubeconfig, client: e.client, namespace: "default" };
});
afterAll(() => e.stop());

test.each(["blackhole", "close"] as const)("a lease holder cut off from the API server (%s) stops its running handler before the standby starts it (zero overlap)", async (cut) => {
  // A 9-second handler that honours its signal.
  const { spans, holder, standby, cutAt } = await cutOffMidHandler(api, `honours-${cut}`, "500ms", (signal) => sleep(9000, signal).then(() => {}), cut);
  try {
    await eventually(() => spans.some((s) => s.replica === "standby"), "the standby to start the handler", 10_000);
    await eventually(() => spans.every((s) => s.replica !== "holder" || s.end !== undefined), "the holder's handler to end", 10_000);
    const m = overlapOf(spans, cutAt);
    console.log(`${cut}: cut → holder's handler ended ${m.holderEndedMs.toFixed(0)} ms; cut → standby's started ${m.standbyStartedMs.toFixed(0)} ms; overlap ${m.overlapMs.toFixed(0)} ms (gap ${m.gapMs.toFixed(0)} ms)`);
    expect(m.overlapMs).toBe(0);
    expect(linesAt(holder.lines, "WARN").some((l) => l.includes("lost the lease: freezing"))).toBe(true);
    expect(linesAt(holder.lines, "WARN").filter((l) => l.includes("abandoned"))).toEqual([]);
  } finally {
    await standby.stop();
    await holder.stop();
  }
}, 30_000);

test("a cut-off holder names a handler that ignores its signal, after the grace and before the lease can expire", async () => {
  const { spans, holder, standby, cutAt } = await cutOffMidHandler(api, "deaf", "300ms", () => Bun.sleep(6000)); // deaf to its signal
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
