// sharding/'s ShardObserver, wired by runtime/ into the metrics registry, scraped over HTTP
// from a real listener while replicas share shards over Leases on a real (sandbox) API server:
// owned shards by shard, handovers by direction, coverage gaps and overlaps (with a warning).

import { afterEach, beforeEach, expect, test } from "bun:test";
import { freshLease, leaseResource, renewedLease } from "../../src/kube/lease-record.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { Health } from "../../src/observability/health.ts";
import { startMetricsServer, type ProbeServer } from "../../src/observability/probes.ts";
import { shardMetrics } from "../../src/runtime/metrics.ts";
import { GROUP_LABEL, ShardLeases } from "../../src/sharding/leases.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";

let e: Env;
const running: { controller: AbortController; done: Promise<void>; server: ProbeServer }[] = [];
beforeEach(async () => { e = await env({ crds: [] }); });
afterEach(async () => {
  for (const r of running.splice(0)) { r.controller.abort(); await r.done; await r.server.stop(); }
  await e.stop();
});

const FAST = { durationMs: 2000, renewDeadlineMs: 1200, retryPeriodMs: 200, graceMs: 400 };

/** A replica with a registry and a /metrics listener of its own. */
function replica(id: string, shards: number, timings = FAST) {
  const { logger, lines } = testLogger();
  const health = new Health();
  const server = startMetricsServer("http://127.0.0.1:0", health);
  const leases = new ShardLeases({ client: e.client, namespace: "default", group: "op", shards, id, logger, ...timings, observer: shardMetrics(health.metrics) });
  const controller = new AbortController();
  const handle = { leases, lines, controller, server, done: leases.run(controller.signal) };
  running.push(handle);
  /** One sample's value from a real scrape; undefined when the series does not exist. */
  const sample = async (series: string): Promise<number | undefined> => {
    const line = (await (await fetch(server.url)).text()).split("\n").find((l) => l.startsWith(series + " "));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };
  return { ...handle, sample };
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await Bun.sleep(20);
  }
}

test("/metrics shows the shards a replica owns, by shard, and its handovers: acquired at start, released when another joins", async () => {
  const a = replica("a", 4);
  await until("a owns 4", async () => (await a.sample("kobun_shards_owned")) === 4);
  for (const shard of [0, 1, 2, 3]) expect(await a.sample(`kobun_shard_owned{shard="${shard}"}`)).toBe(1);
  expect(await a.sample('kobun_shard_handovers_total{direction="acquired"}')).toBe(4);
  const b = replica("b", 4);
  await until("2 each", async () => (await a.sample("kobun_shards_owned")) === 2 && (await b.sample("kobun_shards_owned")) === 2);
  expect(await a.sample('kobun_shard_handovers_total{direction="released"}')).toBe(2);
  expect(await a.sample('kobun_shard_handovers_total{direction="abandoned"}')).toBeUndefined();
  expect(await b.sample('kobun_shard_handovers_total{direction="acquired"}')).toBe(2);
  const given = a.leases.owned.length === 2 ? [0, 1, 2, 3].filter((s) => !a.leases.owned.includes(s)) : [];
  for (const shard of given) expect(await a.sample(`kobun_shard_owned{shard="${shard}"}`)).toBeUndefined();
  expect(await a.sample("kobun_shards_without_live_owner")).toBe(0);
  expect(await a.sample("kobun_shards_with_several_owners")).toBe(0);
}, 30_000);

test("a shard held by a replica that is gone is a gap on /metrics (and a warning) until its lease expires and it is taken", async () => {
  // "ghost" holds shard 1 and has no membership Lease: it is not a live replica.
  const ghost = freshLease("op-shard-1", "default", "ghost", FAST.durationMs, Date.now());
  ghost.metadata.labels = { [GROUP_LABEL]: "op", "kobun.dev/shard-role": "shard" };
  await e.client.create(leaseResource, "default", ghost);
  const a = replica("a", 2);
  await until("the ghost's shard is a gap", async () => (await a.sample("kobun_shards_without_live_owner")) === 1);
  expect(a.lines.some((l) => l.includes("WARN") && l.includes("shard coverage") && l.includes("orphans=1"))).toBe(true);
  await until("a takes it after its lease duration", async () => (await a.sample("kobun_shards_owned")) === 2, 6000);
  expect(await a.sample("kobun_shards_without_live_owner")).toBe(0);
}, 30_000);

test("a held shard whose Lease another holder took is an overlap: warned, given up at once without a handover (abandoned)", async () => {
  const slow = { durationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 5000, graceMs: 400 };
  const a = replica("a", 1, slow);
  await until("a owns the shard", async () => (await a.sample("kobun_shards_owned")) === 1);
  const lease = await e.client.get(leaseResource, "default", "op-shard-0") as KubeObject;
  const taken = Date.now();
  await e.client.replace(leaseResource, "default", "op-shard-0", renewedLease(lease, "intruder", slow.durationMs, Date.now()));
  await until("a gives it up", async () => (await a.sample("kobun_shards_owned")) === 0, 4000);
  expect(Date.now() - taken).toBeLessThan(slow.retryPeriodMs); // from the watch, not at the next renewal
  expect(await a.sample('kobun_shard_handovers_total{direction="abandoned"}')).toBe(1);
  expect(await a.sample("kobun_shards_with_several_owners")).toBe(0); // resolved by giving it up
  expect(a.lines.some((l) => l.includes("WARN") && l.includes("shard coverage") && l.includes("overlaps=0"))).toBe(true);
  expect(a.lines.some((l) => l.includes("lost a shard") && l.includes("intruder"))).toBe(true);
}, 30_000);
