// Lease mode: two equal replicas, exactly one active; a clean exit of the holder releases
// the lease and the standby takes over at once; a holder that cannot renew freezes.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { LeaseElection, leaseResource } from "../../src/peering/index.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { env, linesAt, testLogger, until, type Env } from "./helpers.ts";

let e: Env;
const running: { controller: AbortController; done: Promise<void> }[] = [];
beforeEach(async () => {
  e = await env({ crds: [] });
});
afterEach(async () => {
  for (const r of running.splice(0)) {
    r.controller.abort();
    await r.done;
  }
  await e.stop();
});

function replica(id: string, timings: { duration?: number; renewDeadline?: number; retryPeriod?: number } = {}) {
  const toggle = new Toggle();
  const { logger, lines, logged } = testLogger();
  const election = new LeaseElection({ client: e.client, toggle, name: "my-operator", namespace: "default", id, logger, duration: 3, renewDeadline: 2, retryPeriod: 0.5, ...timings });
  const controller = new AbortController();
  const done = election.run(controller.signal);
  const handle = { election, toggle, lines, logged, controller, done };
  running.push(handle);
  return handle;
}

const lease = () => e.sandbox.store.get("coordination.k8s.io", "leases", "default", "my-operator");

test("two equal replicas: exactly one is active, the other stands by; failover after a clean exit is prompt", async () => {
  // A 10 s lease: a busy machine's late renewals cannot expire it, and a takeover by expiry
  // (not by the release) would come seconds after the bound below.
  const a = replica("replica-a", { duration: 10, renewDeadline: 6 });
  const b = replica("replica-b", { duration: 10, renewDeadline: 6 });
  expect(a.toggle.frozen && b.toggle.frozen).toBe(true); // both frozen until one acquires
  await Promise.race([until(a.toggle, false), until(b.toggle, false)]);
  // a few renewal rounds later, still exactly one active
  for (let i = 0; i < 3; i++) await e.sandbox.waitFor((r) => r.verb === "update" && r.plural === "leases", 3000);
  expect([a.toggle.frozen, b.toggle.frozen].filter((f) => !f)).toHaveLength(1);
  const [holder, standby] = a.toggle.frozen ? [b, a] : [a, b];
  expect(lease()?.spec?.holderIdentity).toBe(holder.election.id);
  expect(holder.election.leading).toBe(true);
  expect(standby.election.leading).toBe(false);
  // A standby whose first attempt failed (a loaded machine's slow answer) says so at its next one.
  await standby.logged("standing by", { timeout: 5000 });
  expect(standby.toggle.reasons()["lease:my-operator"]).toContain(holder.election.id);

  holder.controller.abort();
  const exited = Date.now();
  await holder.done;
  const tookOver = await until(standby.toggle, false, 6000);
  expect(tookOver - exited).toBeLessThan(4000);
  expect(lease()?.spec?.holderIdentity).toBe(standby.election.id);
  expect(lease()?.spec?.leaseTransitions).toBe(1);
  expect(linesAt(standby.lines, "INFO").filter((l) => l.includes("standing by"))).toHaveLength(1);
  expect(linesAt(standby.lines, "INFO").filter((l) => l.includes("acquired"))).toHaveLength(1);
}, 20_000);

test("a standby takes over an abandoned lease (holder killed) after its duration", async () => {
  const now = new Date().toISOString().replace("Z", "000Z");
  await e.client.create(leaseResource, "default", {
    apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: "my-operator", namespace: "default" },
    spec: { holderIdentity: "killed", leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: 0 },
  });
  const t0 = Date.now();
  const b = replica("replica-b", { retryPeriod: 5 }); // the expiry timer, not the poll, must act
  const tookOver = await until(b.toggle, false, 4500);
  expect(tookOver - t0).toBeGreaterThanOrEqual(1000);
  expect(tookOver - t0).toBeLessThan(4000); // the poll would come at 5 s; a busy machine may be late by seconds
}, 15_000);

test("a holder whose lease is taken over behind its back freezes at once", async () => {
  const a = replica("replica-a", { duration: 3, renewDeadline: 1, retryPeriod: 0.3 });
  await until(a.toggle, false);
  // Another writer takes the lease over behind the holder's back (e.g. an operator with a skewed view).
  const current = lease();
  await e.client.replace(leaseResource, "default", "my-operator", { ...current, spec: { ...current.spec, holderIdentity: "usurper", renewTime: new Date().toISOString() } });
  await until(a.toggle, true, 2000);
  expect(a.election.leading).toBe(false);
  expect(linesAt(a.lines, "WARN").filter((l) => l.includes("lost the lease"))).toHaveLength(1);
});

test("a holder that cannot renew within renewDeadline freezes at its deadline, not a retry later", async () => {
  // Attempts every 0.8 s: the first failing one comes before the 1 s deadline, the next (a
  // retry later) at 1.6 s, so a loaded machine's late timers still fall clearly between.
  const a = replica("replica-a", { duration: 3, renewDeadline: 1, retryPeriod: 0.8 });
  await until(a.toggle, false);
  await e.sandbox.waitFor((r) => r.verb === "update" && r.plural === "leases", 3000); // a renewal just happened
  e.sandbox.faults.failNext(1000, 500, { verb: "update", plural: "leases" });
  const frozen = await until(a.toggle, true, 8000);
  // The deadline counts from the last renewal's own time (its renewTime, set when it was sent),
  // not from when the test saw the request arrive, which a busy machine delays.
  const renewed = Date.parse(lease()!.spec.renewTime);
  expect(frozen - renewed).toBeGreaterThanOrEqual(990);
  // Which path froze it, not how late: a busy machine's late timers move the wall clock, never
  // the order of the deadline timer (1 s) and the retry's attempt (1.6 s), which says "could not renew".
  const lost = linesAt(a.lines, "WARN").filter((l) => l.includes("lost the lease"));
  expect(lost).toHaveLength(1);
  expect(lost[0]).toContain("not renewed within renewDeadline");
  expect(lost[0]).not.toContain("could not renew");
}, 15_000);
