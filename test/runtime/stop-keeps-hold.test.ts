// A stop that outlasts what keeps the other replicas out: the active replica (the lease's holder,
// or the operator of higher priority in a peering) keeps its Lease renewed, or its peering record
// written, while its handlers stop at shutdown, and releases (removes) it only once they have
// ended. So a `shutdown.gracePeriod` longer than what is left of `peering.lease.duration` or
// `peering.lifetime` does not let the other replica take over, and start the same handler on the
// same object, while the active one is still inside it.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { configmaps as CONFIGMAPS, env, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";
import { loggedAt, slowStopper, type SlowStopper, type Span } from "./slow-stop.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

const shutdown = { gracePeriod: "6s" };
const lease = { duration: "2s", renewDeadline: "1s", retryPeriod: "200ms" };
const MODES = [
  {
    mode: "lease", active: { peering: { mode: "lease", name: "stop-lease", freezeGracePeriod: "300ms", lease }, shutdown },
    other: { peering: { mode: "lease", name: "stop-lease", freezeGracePeriod: "300ms", lease }, shutdown },
    waiting: "standing by", takeover: "acquired the lease",
  },
  {
    mode: "peering", active: { peering: { name: "stop-peering", priority: 10, lifetime: "2s", freezeGracePeriod: "300ms" }, shutdown },
    other: { peering: { name: "stop-peering", priority: 0, lifetime: "2s", freezeGracePeriod: "300ms" }, shutdown },
    waiting: "freezing: a peer with a higher priority", takeover: "resuming",
  },
];

test.each(MODES)("$mode: the active replica stopping with a handler that winds down for 3 s (past its hold's 2 s) keeps the other out until it ended", async ({ mode, active, other, waiting, takeover }) => {
  const spans: Span[] = [];
  const first = await slowStopper(e.sandbox.kubeconfigPath, "active", spans, 3000, active);
  let second: SlowStopper | undefined;
  try {
    await eventually(() => first.lines.some((l) => l.includes("operator ready")), "the active replica to be ready", 10_000);
    second = await slowStopper(e.sandbox.kubeconfigPath, "other", spans, 0, other);
    await eventually(() => second!.lines.some((l) => l.includes(waiting)), "the other replica to wait", 10_000);
    await e.client.create(CONFIGMAPS, "default", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `winding-${mode}` } });
    await eventually(() => spans.some((s) => s.replica === "active"), "the active replica's handler to start", 10_000);
    const report = await first.stop();
    expect(report.abandoned).toEqual([]);
    const ended = spans.find((s) => s.replica === "active")!;
    // Whatever the other ran after the takeover began after the active one's handler had ended.
    for (const span of spans.filter((s) => s.replica === "other")) expect(span.start).toBeGreaterThanOrEqual(ended.end!);
    await eventually(() => second!.lines.some((l) => l.includes(takeover)), "the other replica to take over", 10_000);
    expect(loggedAt(second.lines.find((l) => l.includes(takeover))!)).toBeGreaterThanOrEqual(ended.endedAt!);
  } finally {
    await second?.stop();
  }
}, 40_000);
