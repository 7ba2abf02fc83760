// lease-overlap.test.ts's guarantee held by an on.reconcile: two replicas in lease mode never run
// the same object's reconcile at once, across a lease loss too. The holder, cut off from the API
// server mid-reconcile, freezes at its renew deadline, its reconcile's signal aborts and its cycle
// is discarded before the standby, once it holds the lease, starts reconciling the same object.

import { afterAll, beforeAll, expect, test } from "bun:test";
import type { ReconcileContext } from "../../src/declaring/index.ts";
import { sleep } from "../../src/util/abort.ts";
import { env, linesAt, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";
import { cutOffMidHandler, overlapOf, type ApiServer, type Registration } from "./lease-replicas.ts";

// One sandbox for the file; the replicas of each test watch its default namespace.
const sandbox: { env?: Env; api?: ApiServer } = {};
beforeAll(async () => {
  const { sandbox: server, client } = (sandbox.env = await env({ crds: [] }));
  sandbox.api = { url: server.url, kubeconfig: server.kubeconfig, client, namespace: "default" };
});
afterAll(() => sandbox.env?.stop());

/** The replicas reconcile configmaps (no generation: every version is a trigger) of their scenario. */
const onReconcile: Registration = (registry, scenario, call) =>
  registry.on.reconcile("v1/configmaps", (ctx: ReconcileContext) => call(ctx.signal), {
    id: "nine-seconds", when: ({ labels }) => labels.scenario === scenario,
  });

/** Its reconcile: 9 seconds that honour its signal, or 6 that ignore it (then it is abandoned after the grace). */
const reconciles = {
  honours: (signal: AbortSignal) => sleep(9000, signal).then(() => {}),
  ignores: () => Bun.sleep(6000),
};

test.each([
  ["honours", "blackhole"], ["honours", "close"], ["ignores", "blackhole"],
] as const)("a lease holder cut off from the API server mid-reconcile (it %s its signal; %s) is out of it before the standby reconciles the object", async (kind, cut) => {
  const name = `reconcile-${kind}-${cut}`;
  const grace = kind === "ignores" ? "300ms" : "500ms";
  const { spans, holder, standby, cutAt } = await cutOffMidHandler(sandbox.api!, name, grace, reconciles[kind], cut, onReconcile);
  try {
    await eventually(() => spans.some((s) => s.replica === "standby"), "the standby to start the reconcile", 10_000);
    const second = spans.find((s) => s.replica === "standby")!;
    expect(spans.filter((s) => s.replica === "holder")).toHaveLength(1);
    expect(linesAt(holder.lines, "WARN").some((l) => l.includes("lost the lease: freezing"))).toBe(true);
    // By the wall clock of both: the holder gave the object up before the standby began.
    const logged = (line: string | undefined) => Date.parse(line!.split(" ")[0]!);
    if (kind === "ignores") {
      // Named as abandoned after the grace: the holder's own log says which overlap is coming.
      const warned = linesAt(holder.lines, "WARN").find((l) => l.includes("abandoned a handler"));
      expect(warned).toContain(`nine-seconds on default/${name}`);
      expect(logged(warned)).toBeLessThan(second.startedAt);
      console.log(`ignores its signal: cut → standby's start ${(second.start - cutAt).toFixed(0)} ms; named ${second.startedAt - logged(warned)} ms before it`);
      return;
    }
    await eventually(() => spans.every((s) => s.replica !== "holder" || s.end !== undefined), "the holder's reconcile to end", 10_000);
    const m = overlapOf(spans, cutAt);
    console.log(`${cut}: cut → holder's reconcile ended ${m.holderEndedMs.toFixed(0)} ms; cut → standby's started ${m.standbyStartedMs.toFixed(0)} ms; overlap ${m.overlapMs.toFixed(0)} ms`);
    expect(m.overlapMs).toBe(0);
    // Discarded (nothing of it written, no Event) before the standby started it.
    const discarded = holder.lines.find((l) => l.includes("the cycle's results are not written") && l.includes(`name=${name}`));
    expect(logged(discarded)).toBeLessThanOrEqual(second.startedAt);
    expect(linesAt(holder.lines, "WARN").filter((l) => l.includes("abandoned") || l.includes("Reconcile"))).toEqual([]);
  } finally {
    await standby.stop();
    await holder.stop();
  }
}, 30_000);
