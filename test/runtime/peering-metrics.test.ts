// kobun_peers_seen and kobun_lease_held of a running operator, scraped over HTTP: a peer's
// record appearing in the peering object is counted (and freezes us, kobun_frozen), its
// expiry uncounts it; in lease mode the gauge is 1 while this replica holds the lease, and 0
// again once another holder has taken it over.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { leaseResource, peeringResource } from "../../src/peering/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { env, record, testLogger, writeRaw, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";
import { eventPoll, scraper } from "./scrape.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

function start(fileData: Record<string, unknown>, peerId: string) {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "c" });
  const stop = new AbortController();
  let probeUrl = "";
  const running = run({
    signal: stop.signal, client: e.client, registry, logger: testLogger().logger, peerId,
    settings: resolveSettings({ fileData, flags: { namespaces: ["default"], liveness: "http://127.0.0.1:0/healthz" } }),
    onStarted: (info) => (probeUrl = info.probeUrl ?? ""),
  });
  const metrics = scraper(() => probeUrl.replace(/\/healthz$/, "/metrics"));
  return { ...metrics, started: () => eventually(() => probeUrl !== "", "the operator to start"), stop: () => (stop.abort(), running) };
}

test("kobun_peers_seen counts a live peer's record, which freezes us, and drops it when the record expires", async () => {
  const op = start({}, "me");
  const peers = 'kobun_peers_seen{scope="default"}';
  try {
    await op.started();
    await eventPoll(op.scrape, () => op.has(peers) && op.value('kobun_frozen{scope="default"}') === 0, "the first look at the peers");
    expect(op.value(peers)).toBe(0);
    // A higher-priority peer whose record lives 1 s: seen and freezing, then a ghost.
    await writeRaw(e.client, peeringResource("kobun.dev", true), "default", "default", "higher", record(10, 1));
    await eventPoll(op.scrape, () => op.value(peers) === 1, "the peer to be seen");
    expect(op.value('kobun_frozen{scope="default"}')).toBe(1);
    await eventPoll(op.scrape, () => op.value(peers) === 0 && op.value('kobun_frozen{scope="default"}') === 0, "the peer to expire", 5000);
  } finally {
    await op.stop();
  }
}, 15_000);

test("kobun_lease_held is 1 while this replica holds the lease", async () => {
  const op = start({ peering: { mode: "lease", name: "metrics-lease" } }, "leader");
  const held = 'kobun_lease_held{scope="operator"}';
  try {
    await op.started();
    await eventPoll(op.scrape, () => op.value(held) === 1, "the lease to be acquired");
    expect(op.value('kobun_frozen{scope="operator"}')).toBe(0);
  } finally {
    await op.stop();
  }
}, 15_000);

test("kobun_lease_held drops to 0 and the operator freezes when another replica holds the lease", async () => {
  const op = start({ peering: { mode: "lease", name: "taken-lease", lease: { duration: "8s", renewDeadline: "4s", retryPeriod: "200ms" } } }, "first");
  const held = 'kobun_lease_held{scope="operator"}';
  try {
    await op.started();
    await eventPoll(op.scrape, () => op.value(held) === 1, "the lease to be acquired");
    // Someone else renews it as theirs: our next renewal sees a live holder that is not us.
    const renewTime = new Date().toISOString().replace("Z", "000Z");
    await e.client.patch(leaseResource, "default", "taken-lease", { spec: { holderIdentity: "other", renewTime, leaseDurationSeconds: 60 } });
    await eventPoll(op.scrape, () => op.value(held) === 0 && op.value('kobun_frozen{scope="operator"}') === 1, "the lease to be given up");
  } finally {
    await op.stop();
  }
}, 20_000);
