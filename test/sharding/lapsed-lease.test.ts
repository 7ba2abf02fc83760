// A process stalled past renewDeadline (a loaded machine, a long synchronous task) runs its due
// timers in due order when it wakes: the handler's own timer, or an event's cycle, comes before
// the timer that loses the shard. So whether the lease is still ours is asked of the clock too:
// a cycle entering such a shard, or about to write for it, finds it lost, at once, and another
// replica (which may take the Lease once it has not changed for durationMs) never meets it.
// The stalls here are synchronous busy waits: nothing of this process runs meanwhile.

import { expect, test } from "bun:test";
import { shardReplicas } from "./replicas.ts";

const replicas = shardReplicas();
const TIMINGS = { durationMs: 3000, renewDeadlineMs: 1000, retryPeriodMs: 100, graceMs: 200 };

async function eventually(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await Bun.sleep(20);
  }
}

/** Blocks this process (timers, sockets, everything) for `ms`. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) { /* a process that does not get the CPU */ }
}

test("a cycle entering a shard whose lease passed renewDeadline in a stall gets a stopped hold: the shard is lost at once, before its timer runs", async () => {
  const a = replicas.replica("a", { shards: 2, ...TIMINGS });
  await eventually("a owns both shards", () => a.leases.owned.length === 2, 5000);
  stall(TIMINGS.renewDeadlineMs + 200);
  const hold = a.leases.holds.enter(0);
  expect(hold.signal.aborted).toBe(true);
  expect(a.leases.owned).not.toContain(0);
  expect(a.lines.filter((l) => l.includes("lost a shard") && l.includes("stalled")).length).toBeGreaterThanOrEqual(1);
}, 15_000);

test("a cycle that was running when the process stalled past renewDeadline is told, before it writes, that the shard is no longer its own", async () => {
  const a = replicas.replica("a", { shards: 1, ...TIMINGS });
  await eventually("a owns the shard", () => a.leases.owned.length === 1, 5000);
  const hold = a.leases.holds.enter(0);
  expect(hold.current()).toBe(true);
  stall(TIMINGS.renewDeadlineMs + 200);
  expect(hold.current()).toBe(false);
  expect(hold.signal.aborted).toBe(true);
  hold.exit();
  expect(a.lines.some((l) => l.includes("lost a shard") && l.includes("stalled"))).toBe(true);
}, 15_000);

test("a stall shorter than renewDeadline loses nothing", async () => {
  const a = replicas.replica("a", { shards: 1, ...TIMINGS });
  await eventually("a owns the shard", () => a.leases.owned.length === 1, 5000);
  await Bun.sleep(TIMINGS.retryPeriodMs * 3); // renewed since it was taken
  const hold = a.leases.holds.enter(0);
  stall(100);
  expect(hold.current()).toBe(true);
  hold.exit();
  expect(a.leases.owned).toEqual([0]);
}, 15_000);
