// A live replica that never takes shards (its membership renewed, its shard writes failing, say)
// must not make the others flap: with 4 shards over 3 replicas (quotas 2/1/1, ceiling 2) and
// the third never taking, a replica below the ceiling took the long-free shard and released it
// straight away "for rebalancing", about every second. A replica that joins and does take
// shards still gets its share.

import { expect, test } from "bun:test";
import { freshLease, leaseResource, renewedLease } from "../../src/kube/lease-record.ts";
import { GROUP_LABEL, memberLeaseName } from "../../src/sharding/leases.ts";
import { ROLE_LABEL } from "../../src/sharding/lease-book.ts";
import { shardReplicas, type Replica } from "./replicas.ts";

const replicas = shardReplicas();

const TIMINGS = { durationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 150, graceMs: 300 };
/** Longer than the flapping's period: a released Lease is written with 1 s, and taken back once that passed. */
const WATCH_MS = 1500;
const changes: string[] = [];
const replicasForDebug: { id: string; lines: string[] }[] = [];

function replica(id: string) {
  const handle = replicas.replica(id, { shards: 4, ...TIMINGS, onChange: (owned) => changes.push(`${id}: ${owned.join()}`) });
  replicasForDebug.push({ id, lines: handle.lines });
  return handle;
}

/** A member that renews its membership Lease every retryPeriod and never takes a shard. */
function idleMember(id: string) {
  const controller = new AbortController();
  const name = memberLeaseName("op", id);
  const done = (async () => {
    const lease = freshLease(name, "default", id, TIMINGS.durationMs, Date.now());
    lease.metadata.labels = { [GROUP_LABEL]: "op", [ROLE_LABEL]: "member" };
    let written = await replicas.env().client.create(leaseResource, "default", lease);
    while (!controller.signal.aborted) {
      await Bun.sleep(TIMINGS.retryPeriodMs); // its renewal period, as a replica's
      written = await replicas.env().client.replace(leaseResource, "default", name, renewedLease(written, id, TIMINGS.durationMs, Date.now()));
    }
  })();
  replicas.track({ controller, done });
}

async function eventually(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await Bun.sleep(20);
  }
}

const owned = (rs: Replica[]) => rs.flatMap((r) => r.leases.owned).sort().join();

/** Until no change of anyone's shards for `quietMs` (the start-up settling, before every replica saw every other). */
async function settled(quietMs: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let count = -1; count !== changes.length; ) {
    if (Date.now() > deadline) throw new Error(`still changing after ${timeoutMs} ms: ${changes.slice(-6).join("; ")}`);
    count = changes.length;
    await Bun.sleep(quietMs);
  }
}

/** No change of anyone's shards for `ms` (a window to watch, not a wait for something). */
async function steady(ms: number): Promise<void> {
  const before = changes.length;
  await Bun.sleep(ms);
  if (changes.length > before) for (const r of replicasForDebug) console.log(r.id, r.lines.filter((l) => !l.includes("debug")).join("\n"));
  expect(changes.slice(before)).toEqual([]);
}

test("a live replica that never takes shards makes no one flap; the long-free shard is kept; a joining replica still gets its share", async () => {
  changes.length = 0;
  idleMember("c");
  await Bun.sleep(50); // its membership is written before the others start
  const a = replica("a");
  const b = replica("b");
  // c's quota (1 of 4) stays free: a replica below the ceiling takes it once it was free for a
  // duration, and gives it back while c looks like taking it; c marked (two durations), it is kept.
  await eventually("all 4 shards held by a and b", () => owned([a, b]) === "0,1,2,3", 6000);
  await settled(1200, 8000);
  await steady(WATCH_MS);
  const d = replica("d");
  await eventually("d gets its share", () => d.leases.owned.length >= 1, 3000);
  await eventually("all 4 held by a, b and d", () => owned([a, b, d]) === "0,1,2,3", 6000);
  await settled(1200, 8000);
  await steady(WATCH_MS);
}, 30_000);
