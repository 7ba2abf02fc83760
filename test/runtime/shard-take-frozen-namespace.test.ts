// Client-side sharding (the server ignores shardSelector): a shard taken holds the handlers until
// every indexed stream's LIST of it is through, since their indexes lack its objects until then.
// A stream whose namespace is frozen by its own peering lists only when the freeze ends, so its
// take's hold pauses with it, as its first LIST's does: one frozen namespace must not keep the
// handlers of every other namespace waiting for as long as it stays frozen (before, a namespace
// frozen at start-up held every handler from the replica's first take of its shards).

import { afterAll, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/index.ts";
import type { Resource } from "../../src/kube/types.ts";
import { freezeManually, resumeManually } from "../../src/peering/index.ts";
import { installCRDs } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";
import { releaseShardLease, runKeeper, takeShardLease, twoShardSandbox } from "./shard-leases.ts";

const NAMESPACES: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops) await stop();
});

test("client-side sharding: a shard taken while one namespace waits out its freeze holds the other namespaces' handlers only until their own LISTs are through", async () => {
  const home = "take-frozen";
  const { sandbox, admin, away, shardLease, holder, stop: stopSandbox } = await twoShardSandbox(false, home);
  stops.push(stopSandbox);
  const cold = `${home}-cold`;
  await admin.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: cold } });
  await installCRDs(admin, "kobun.dev");
  // The peering objects are named after peering.name (`home`), one per namespace served.
  const frozenBy = await freezeManually({ client: admin, name: home, namespace: cold, group: "kobun.dev", lifetime: 600 });

  const registry = new Registry();
  registry.on.index("v1/configmaps", ({ name }) => ({ all: name }), { id: "byName" });
  const handled = new Set<string>();
  registry.on.create("v1/configmaps", ({ namespace, name }) => void handled.add(`${namespace}/${name}`), { id: "record" });
  const keeper = await runKeeper(sandbox, registry, home, [home, away, cold], true);
  const { lines } = keeper;
  const acquired = () => lines.filter((l) => l.includes("acquired a shard")).length;
  try {
    await eventually(() => lines.some((l) => /freezing: a peer with a higher priority/.test(l)) && acquired() === 2 && holder() === "keeper", "cold frozen, both shards held", 10_000);
    await admin.create(CONFIGMAPS, home, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "before" } });
    await eventually(() => handled.has(`${home}/before`), "home handled before any take", 10_000);
    // Another replica takes the away shard and gives it back: the replica takes it again, and
    // every stream of the client-side layout relists for it (cold's only once its freeze ends).
    const taken = await takeShardLease(admin, home, shardLease, "thief", 60_000);
    await eventually(() => lines.some((l) => l.includes("lost a shard")), "the shard lost", 10_000);
    await releaseShardLease(admin, taken);
    await eventually(() => holder() === "keeper" && acquired() === 3, "the shard taken back", 10_000);
    await admin.create(CONFIGMAPS, home, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "after-take" } });
    await admin.create(CONFIGMAPS, cold, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "while-frozen" } });
    // Held until cold resumed (600 s) before: the other namespaces' LISTs are through in moments.
    await eventually(() => handled.has(`${home}/after-take`), "home handled while cold stays frozen", 10_000);
    expect(handled.has(`${cold}/while-frozen`)).toBe(false);
    await resumeManually({ client: admin, name: home, namespace: cold, group: "kobun.dev", id: frozenBy });
    await eventually(() => handled.has(`${cold}/while-frozen`), "cold handled once it resumes", 10_000);
  } finally {
    await keeper.stop();
  }
}, 60_000);
