// A handover that waits out its grace (cycles that ignore their signal) does not stop the
// renewals of the shards kept: with a grace longer than renewDeadline (a valid setting while
// renewDeadline + grace < duration), the replica would otherwise lose every shard it meant to keep.

import { expect, test } from "bun:test";
import { shardReplicas } from "./replicas.ts";

const replicas = shardReplicas();

// Twice the shortest valid timings: a renewal that a loaded machine delays past a 1 s renewDeadline
// lost a shard in one of many loaded full-suite runs; 2 s holds there.
const TIMINGS = { durationMs: 6000, renewDeadlineMs: 2000, retryPeriodMs: 400, graceMs: 3800 };

const replica = (id: string, shards: number) => replicas.replica(id, { shards, ...TIMINGS });

async function eventually(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await Bun.sleep(20);
  }
}

test("a handover waiting out its grace keeps renewing the shards kept: none is lost at renewDeadline meanwhile", async () => {
  const a = replica("a", 4);
  await eventually("a owns the 4 shards", () => a.leases.owned.length === 4, 5000);
  // A cycle in every shard that never ends: whichever two a gives up, it waits the whole grace.
  for (const shard of a.leases.owned) a.leases.holds.enter(shard);
  const b = replica("b", 4);
  await eventually("2/2 once a's grace is over", () => a.leases.owned.length === 2 && b.leases.owned.length === 2, 12_000);
  expect(a.lines.filter((l) => l.includes("lost a shard"))).toEqual([]);
}, 25_000);
