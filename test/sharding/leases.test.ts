// Shards over Leases against the sandbox: replicas share the shards by their quotas, a joining
// replica gets its share with no shard ever owned by two at once, a dead replica's shards are
// taken after their lease duration, and a shard is released only after its cycles ended.

import { expect, test } from "bun:test";
import { freshLease, leaseResource } from "../../src/kube/lease-record.ts";
import { GROUP_LABEL, memberLeaseName } from "../../src/sharding/leases.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { proxiedKubeconfig } from "../runtime/lease-replicas.ts";
import { startTcpProxy } from "../runtime/tcp-proxy.ts";
import { shardReplicas, type Replica } from "./replicas.ts";

const replicas = shardReplicas();
const sandbox = () => replicas.env().sandbox;

/** Every ownership interval of every shard, by the replicas' own clock (one process: one clock). */
const intervals: { shard: number; id: string; from: number; to?: number }[] = [];
const TIMINGS = { durationMs: 2000, renewDeadlineMs: 1200, retryPeriodMs: 200, graceMs: 400 };

function replica(id: string, shards = 16, client: KubeClient = replicas.env().client, timings: typeof TIMINGS = TIMINGS) {
  return replicas.replica(id, {
    client, shards, ...timings,
    onChange: (owned) => {
      const now = Date.now();
      for (const i of intervals) if (i.id === id && i.to === undefined && !owned.includes(i.shard)) i.to = now;
      for (const shard of owned) if (!intervals.some((i) => i.id === id && i.shard === shard && i.to === undefined)) intervals.push({ shard, id, from: now });
    },
  });
}

async function eventually(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await Bun.sleep(20);
  }
}

function noOverlap(): void {
  for (const a of intervals) for (const b of intervals) {
    if (a === b || a.shard !== b.shard) continue;
    const overlap = a.from < (b.to ?? Infinity) && b.from < (a.to ?? Infinity);
    expect({ shard: a.shard, overlap, a, b }).toEqual({ shard: a.shard, overlap: false, a, b });
  }
}

const shares = (rs: Replica[]) => rs.map((r) => r.leases.owned.length);
const covered = (rs: Replica[], shards = 16) => rs.flatMap((r) => r.leases.owned).sort((x, y) => x - y).join() === [...Array(shards).keys()].join();

test("three replicas share 16 shards 6/5/5, each shard owned once; a fourth joins and they rebalance to 4 each with no overlap", async () => {
  intervals.length = 0;
  const three = ["a", "b", "c"].map((id) => replica(id));
  await eventually("16 shards covered 6/5/5", () => covered(three) && shares(three).join() === "6,5,5");
  const four = [...three, replica("d")];
  await eventually("rebalanced to 4/4/4/4", () => covered(four) && shares(four).join() === "4,4,4,4");
  noOverlap();
  const leases = sandbox().store.objects("coordination.k8s.io", "leases", "default").filter((l: any) => l.metadata.labels?.[GROUP_LABEL] === "op");
  expect(leases.length).toBe(16 + 4); // a Lease per shard, a membership Lease per replica
}, 30_000);

test("a replica that stops hands its shards over (work stopped first) and deletes its membership", async () => {
  intervals.length = 0;
  const a = replica("a");
  const b = replica("b");
  await eventually("8/8", () => covered([a, b]) && shares([a, b]).join() === "8,8");
  a.controller.abort();
  await a.done;
  await eventually("b owns all", () => b.leases.owned.length === 16, 5000);
  noOverlap();
  expect(sandbox().store.get("coordination.k8s.io", "leases", "default", memberLeaseName("op", "a"))).toBeUndefined();
}, 30_000);

test("a dead replica's shards are taken only after their lease duration", async () => {
  // "ghost" held shards 0..7 and vanished (SIGKILL): its Leases stay as it last wrote them.
  const now = Date.now();
  for (let i = 0; i < 8; i++) {
    const lease = freshLease(`op-shard-${i}`, "default", "ghost", 2000, now);
    lease.metadata.labels = { [GROUP_LABEL]: "op", "kobun.dev/shard-role": "shard" };
    await replicas.env().client.create(leaseResource, "default", lease);
  }
  const a = replica("a");
  await eventually("a takes the free half", () => a.leases.owned.length === 8, 5000);
  expect(a.leases.owned).toEqual([8, 9, 10, 11, 12, 13, 14, 15]);
  const before = Date.now();
  await eventually("a takes the ghost's half", () => a.leases.owned.length === 16, 6000);
  expect(Date.now() - now).toBeGreaterThanOrEqual(2000 - 50);
  expect(Date.now() - before).toBeLessThan(4000);
}, 30_000);

test("a shard is released only after the cycles running in it ended (bounded by the grace)", async () => {
  intervals.length = 0;
  const a = replica("a", 2);
  await eventually("a owns both", () => a.leases.owned.length === 2);
  // A cycle running in each shard, which takes 250 ms to stop once its signal aborts.
  const stoppedAt = new Map<number, number>();
  for (const shard of [0, 1]) {
    const hold = a.leases.holds.enter(shard);
    hold.signal.addEventListener("abort", () => setTimeout(() => { stoppedAt.set(shard, Date.now()); hold.exit(); }, 250));
  }
  const b = replica("b", 2);
  await eventually("1/1", () => covered([a, b], 2) && shares([a, b]).join() === "1,1");
  const taken = intervals.find((i) => i.id === "b")!;
  expect(stoppedAt.has(taken.shard)).toBe(true);
  expect(taken.from).toBeGreaterThanOrEqual(stoppedAt.get(taken.shard)!);
  expect(stoppedAt.has(1 - taken.shard)).toBe(false); // the shard a keeps was not stopped
  noOverlap();
}, 30_000);

test("a replica cut off from the API server (its renewals hang) gives its shards up at renewDeadline, before anyone may take them", async () => {
  const proxy = startTcpProxy(new URL(sandbox().url));
  const client = await KubeClient.connect({ kubeconfigText: proxiedKubeconfig(sandbox().kubeconfig, proxy.url) });
  try {
    const a = replica("a", 4, client);
    await eventually("a owns all", () => a.leases.owned.length === 4);
    const renewed = Date.now(); // a renews every retryPeriod: its last renewal is at most this late
    proxy.blackhole(); // requests hang: no answer, no error, as with a dead network path
    await eventually("a gives its shards up", () => a.leases.owned.length === 0, 5000);
    // Another replica may take them once they are unchanged for durationMs: a must be out by then.
    expect(Date.now() - renewed).toBeLessThan(TIMINGS.durationMs);
    expect(a.lines.some((l) => l.includes("lost a shard") && l.includes("renewDeadline"))).toBe(true);
  } finally {
    proxy.close();
    client.close();
  }
}, 30_000);

const leaseRequests = (verb: string) => sandbox().stats.log.filter((r) => r.plural === "leases" && r.verb === verb).length;

test("idle replicas write each Lease they hold once per retryPeriod and read none: another replica's renewal is not a cue to renew", async () => {
  const three = ["a", "b", "c"].map((id) => replica(id));
  await eventually("16 shards covered 6/5/5", () => covered(three) && shares(three).join() === "6,5,5");
  sandbox().stats.reset();
  const t0 = performance.now();
  await Bun.sleep(1000); // a window to count requests in, not a wait for anything
  const periods = (performance.now() - t0) / TIMINGS.retryPeriodMs;
  // 16 shard Leases and 3 membership Leases, each renewed once a period (+1 for a period begun).
  expect(leaseRequests("update")).toBeLessThanOrEqual((16 + 3) * (Math.ceil(periods) + 1));
  expect(leaseRequests("get") + leaseRequests("list")).toBe(0); // the watch tells them everything
}, 30_000);

test("a released shard is taken at once through the watch, far sooner than the next retryPeriod", async () => {
  const slow = { durationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 5000, graceMs: 400 };
  const a = replica("a", 4, replicas.env().client, slow);
  await eventually("a owns all", () => a.leases.owned.length === 4);
  const b = replica("b", 4, replicas.env().client, slow);
  await eventually("b is a member a has seen, a released its excess: 2/2", () => shares([a, b]).join() === "2,2", 8000);
  const before = Date.now();
  a.controller.abort();
  await a.done; // its shards are released now
  const released = Date.now();
  await eventually("b owns all", () => b.leases.owned.length === 4, 4000);
  // Within a tenth of retryPeriod: a replica acting only every retryPeriod takes up to 5 s.
  expect(Date.now() - released).toBeLessThan(slow.retryPeriodMs / 10);
  expect(released - before).toBeLessThan(2000);
}, 30_000);
