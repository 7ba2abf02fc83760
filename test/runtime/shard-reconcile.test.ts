// on.reconcile under sharding: two replicas reconcile Widgets spread over 8 shards, each owning a
// ConfigMap. Each reconcile records its start and end. Every widget is reconciled by exactly one
// replica at a time (by the owner of its shard); a child's change wakes its parent on that replica
// even when the child's own uid hashes to the other replica's shard (children are watched whole);
// a replica stopped mid-reconcile is out of its reconciles before the other starts them, and every
// widget converges on the one left. An on.reconcile's child with handlers of its own is refused.

import { afterEach, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry, RegistrationError, type ReconcileContext } from "../../src/declaring/index.ts";
import { KubeClient, type KubeObject } from "../../src/kube/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { objectHash, shardOf } from "../../src/sharding/index.ts";
import { sleep } from "../../src/util/abort.ts";
import { Logger, memorySink } from "../../src/util/log.ts";
import { CONFIGMAPS, WIDGETS, widget, world, type World } from "../reconcile/fixtures.ts";
import { eventually } from "./helpers.ts";
import { overlaps, SHARD_LEASE, type Span } from "./shard-replicas.ts";

const SHARDS = 8;
const WIDGET_COUNT = 12;
let w: World | undefined;
afterEach(async () => {
  await w?.stop();
  w = undefined;
});

/** One reconcile: its replica, its widget (by uid, as overlaps() groups), and what it ran for. */
interface Call extends Span { name: string; slow: boolean }

interface Replica { id: string; lines: string[]; stop(): Promise<void> }

/** The reconcile: make the child when the cache shows none (ctx.cache: no API request); a `slow` spec takes 1.5 s (honouring its signal). */
function reconcileOf(id: string, calls: Call[]) {
  return async (ctx: ReconcileContext) => {
    const slow = (ctx.spec as { slow?: boolean }).slow === true;
    const call: Call = { replica: id, uid: ctx.uid!, name: ctx.name, slow, start: performance.now() };
    calls.push(call);
    try {
      // Named by the server: a second child made from a cache that missed the first would show.
      if (ctx.cache.list("configmaps", { namespace: ctx.namespace, labelSelector: `parent=${ctx.name}` }).length === 0) {
        await ctx.api.create({
          apiVersion: "v1", kind: "ConfigMap",
          metadata: {
            generateName: `${ctx.name}-child-`, namespace: ctx.namespace, labels: { parent: ctx.name },
            ownerReferences: [{ apiVersion: "test.kobun.dev/v1", kind: "Widget", name: ctx.name, uid: ctx.uid, controller: true }],
          },
        });
      }
      await sleep(slow ? 1500 : 5, ctx.signal);
      ctx.patch.status.ready = true;
      ctx.patch.status.slow = slow;
    } finally {
      call.end = performance.now();
      call.aborted = ctx.signal.aborted;
    }
  };
}

async function replica(sandboxKubeconfig: string, id: string, peering: string, calls: Call[]): Promise<Replica> {
  const client = await KubeClient.connect({ kubeconfig: sandboxKubeconfig });
  const registry = new Registry();
  registry.on.reconcile("widgets", reconcileOf(id, calls), { id: "with-child", owns: ["configmaps"] });
  const sink = memorySink("debug");
  const stop = new AbortController();
  const settings = resolveSettings({
    fileData: {
      sharding: { replicas: "auto", shards: SHARDS },
      peering: { name: peering, freezeGracePeriod: "500ms", lease: SHARD_LEASE },
      shutdown: { gracePeriod: "1s" }, workers: { batchWindow: 0 },
    },
    flags: { namespaces: ["default"] },
  });
  const running = run({ signal: stop.signal, client, registry, logger: new Logger(sink), settings, peerId: id });
  return {
    id, lines: sink.lines,
    async stop() {
      stop.abort();
      await running;
      client.close();
    },
  };
}

/** Shard Leases held per replica, as the sandbox stores them. */
function shardsHeld(world: World): Map<string, number[]> {
  const held = new Map<string, number[]>();
  for (const lease of world.sandbox.store.objects("coordination.k8s.io", "leases", "default")) {
    const index = /-shard-(\d+)$/.exec(lease.metadata.name ?? "")?.[1];
    const holder = lease.spec?.holderIdentity;
    if (index !== undefined && holder) held.set(holder, [...(held.get(holder) ?? []), Number(index)]);
  }
  return held;
}

const shard = (object: KubeObject) => shardOf(objectHash(object, "uid"), SHARDS);
/** The uid of a child's controller owner. */
const parentUid = (child: KubeObject) => child.metadata.ownerReferences![0]!.uid as string;
/** The children made by the reconciles (labelled with their parent's name). */
const childrenOf = async (client: KubeClient) =>
  (await client.list(CONFIGMAPS, { namespace: "default", labelSelector: "parent" })).items;
const done = (calls: Call[]) => calls.filter((c) => c.end !== undefined && !c.aborted);

test.each([["server-side shard selectors", true], ["client-side filtering", false]] as const)(
  "%s: each widget is reconciled by its shard's owner alone, its child wakes it there, and a handover mid-reconcile never overlaps",
  async (_, shardSelectors) => {
    w = await world({ shardSelectors });
    const client = w.client;
    const calls: Call[] = [];
    const replicas = await Promise.all(["r-a", "r-b"].map((id) => replica(w!.sandbox.kubeconfigPath, id, "shard-reconcile", calls)));
    try {
      await eventually(() => [...shardsHeld(w!).values()].map((s) => s.length).join() === "4,4", "4/4 shards held");
      const names = Array.from({ length: WIDGET_COUNT }, (_, i) => `w${i}`);
      for (const name of names) await client.create(WIDGETS, "default", widget(name));
      const widgets = async () => (await client.list(WIDGETS, { namespace: "default" })).items;
      await eventually(async () => (await widgets()).every((o) => o.status?.ready === true), "every widget ready", 15_000);
      const children = await childrenOf(client);
      expect(children.map((c) => c.metadata.labels?.parent).sort()).toEqual([...names].sort());

      // The owner of each widget's shard reconciled it, and no other replica did.
      const held = shardsHeld(w);
      const ownerOf = (object: KubeObject) => [...held].find(([, shards]) => shards.includes(shard(object)))![0];
      const byUid = new Map((await widgets()).map((o) => [o.metadata.uid!, o]));
      for (const call of calls) expect(call.replica).toBe(ownerOf(byUid.get(call.uid)!));
      // The wakes cross shards: children whose own shard is the other replica's.
      const crossing = children.filter((c) => ownerOf(c) !== ownerOf(byUid.get(parentUid(c))!));
      expect(crossing.length).toBeGreaterThan(0);

      // A child's change wakes its parent, on the parent's shard's owner.
      const before = performance.now();
      for (const child of crossing) {
        await client.patch(CONFIGMAPS, "default", child.metadata.name!, { metadata: { labels: { touched: "yes" } } });
      }
      const woken = (uid: string) => done(calls).some((c) => c.uid === uid && c.start > before);
      const parents = crossing.map(parentUid);
      await eventually(() => parents.every(woken), "every parent of a changed child reconciled again", 15_000);
      for (const call of calls.filter((c) => c.start > before)) expect(call.replica).toBe(ownerOf(byUid.get(call.uid)!));

      // Slow reconciles everywhere; the first replica stops while its are in flight: it hands its shards over.
      for (const name of names) await client.patch(WIDGETS, "default", name, { spec: { slow: true } });
      const [leaving, staying] = replicas as [Replica, Replica];
      await eventually(() => calls.some((c) => c.replica === leaving.id && c.slow && c.end === undefined), "a slow reconcile on the leaving replica");
      await leaving.stop();
      replicas.splice(replicas.indexOf(leaving), 1);
      const converged = (o: KubeObject) => o.status?.slow === true && o.status?.observedGeneration === o.metadata.generation;
      await eventually(async () => (await widgets()).every(converged), "every widget reconciled slow, on the one left", 20_000);

      expect(overlaps(calls)).toEqual([]);
      const stopped = calls.filter((c) => c.replica === leaving.id && c.slow && c.aborted);
      expect(stopped.length).toBeGreaterThan(0); // the handover came mid-reconcile
      for (const call of stopped) {
        const next = calls.find((c) => c.uid === call.uid && c.replica === staying.id && c.start > call.start);
        expect(next).toBeDefined();
        expect(next!.start).toBeGreaterThanOrEqual(call.end!);
      }
      // Exactly one child each still: no replica made a second one from a stale cache.
      const after = await childrenOf(client);
      expect(after.map((c) => c.metadata.uid).sort()).toEqual(children.map((c) => c.metadata.uid).sort());
      console.log(`${shardSelectors ? "server-side" : "client-side"}: ${calls.length} reconciles, ${crossing.length} crossing wakes, ${stopped.length} stopped by the handover`);
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
    }
  },
  60_000,
);

test("a shard taken over while the taker's watch of the children lags: its reconciles wait for them, and make no second child", async () => {
  w = await world();
  const client = w.client;
  const calls: Call[] = [];
  const replicas = await Promise.all(["t-a", "t-b"].map((id) => replica(w!.sandbox.kubeconfigPath, id, "shard-takeover", calls)));
  try {
    await eventually(() => [...shardsHeld(w!).values()].map((s) => s.length).join() === "4,4", "4/4 shards held");
    // From now on both replicas hear of ConfigMaps 3 s late: the owner reads its own children through its
    // overlay of its writes; the taker has only its cache, until its relist of them at the take is through.
    w.sandbox.faults.delayWatches(3000, { plural: "configmaps" });
    const names = Array.from({ length: WIDGET_COUNT }, (_, i) => `t${i}`);
    for (const name of names) await client.create(WIDGETS, "default", widget(name));
    const widgets = async () => (await client.list(WIDGETS, { namespace: "default" })).items;
    await eventually(async () => (await widgets()).every((o) => o.status?.ready === true), "every widget ready", 15_000);
    const [leaving, staying] = replicas as [Replica, Replica];
    const given = new Set(calls.filter((c) => c.replica === leaving.id).map((c) => c.uid));
    const stoppedAt = performance.now();
    await leaving.stop();
    replicas.splice(replicas.indexOf(leaving), 1);
    const retaken = (uid: string) => done(calls).some((c) => c.uid === uid && c.replica === staying.id && c.start > stoppedAt);
    await eventually(() => [...given].every(retaken), "the taker reconciled every widget it took", 20_000);
    const children = await childrenOf(client);
    expect(children.map((c) => c.metadata.labels?.parent).sort()).toEqual([...names].sort());
    console.log(`takeover under a 3 s child watch delay: ${given.size} widgets taken, ${children.length} children for ${names.length}`);
  } finally {
    w.sandbox.faults.delayWatches(0);
    await Promise.all(replicas.map((r) => r.stop()));
  }
}, 60_000);

test("sharding with an on.reconcile whose child has a handler of its own fails at start with a RegistrationError", async () => {
  w = await world();
  const registry = new Registry();
  registry.on.reconcile("widgets", () => {}, { id: "sharded-reconcile", owns: ["configmaps"] });
  registry.on.event("configmaps", () => {}, { id: "child-events" });
  const settings = resolveSettings({
    fileData: { sharding: { replicas: "auto", shards: 4 }, shutdown: { gracePeriod: "1s" } },
    flags: { namespaces: ["default"] },
  });
  const stop = new AbortController();
  const ran = run({ signal: stop.signal, client: w.client, registry, logger: new Logger(memorySink("debug")), settings, peerId: "replica" });
  // Bounded: an operator that started instead would run until stopped.
  const timer = setTimeout(() => stop.abort(), 10_000);
  const error = await ran.then(() => undefined, (thrown: unknown) => thrown);
  clearTimeout(timer);
  expect(error).toBeInstanceOf(RegistrationError);
  expect((error as Error).message).toContain('configmaps is owned or watched by an on.reconcile, and has on.event "child-events" of its own');
  expect((error as Error).message).toContain("move that work into the parent's reconcile");
}, 15_000);
