// A replica that gives shards up stops receiving them (issue 16, server-side sharding): its
// stream of the batch it started with relists with the ranges it has left, instead of keeping
// the wider selector and dropping the given-up shards' events itself. Measured as what reaches
// each replica: after a rebalance from one replica to two, each receives the events of its own
// objects, not the first one all of them.

import { afterAll, expect, test } from "bun:test";
import { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { objectHash, parseShardSelector, shardOf, shardRange } from "../../src/sharding/index.ts";
import { eventually } from "../runtime/helpers.ts";
import { completed, shardReplica, type ShardReplica, type Span } from "../runtime/shard-replicas.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const NAMESPACES: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
const SHARDS = 8;
const NS = "narrowing";
let sandbox: Sandbox;
let admin: KubeClient;
afterAll(async () => {
  admin?.close();
  await sandbox?.stop();
});

function heldBy(holder: string): Set<number> {
  const held = new Set<number>();
  for (const lease of sandbox.store.objects("coordination.k8s.io", "leases", NS)) {
    const index = /-shard-(\d+)$/.exec(lease.metadata.name ?? "")?.[1];
    if (index !== undefined && lease.spec?.holderIdentity === holder) held.add(Number(index));
  }
  return held;
}

/** The shards (of SHARDS) whose hash ranges a shardSelector covers. */
function watchedShards(selector: string): number[] {
  const { ranges } = parseShardSelector(selector);
  const shards = Array.from({ length: SHARDS }, (_, i) => i).filter((i) => {
    const own = shardRange(i, SHARDS);
    return ranges.some((r) => r.start <= own.start && own.end <= r.end);
  });
  return shards;
}

/** The ADDED events of configmaps a replica's watches received so far. */
function addedEvents(replica: ShardReplica): number {
  const line = replica.metrics().split("\n").find((l) => l.startsWith('kobun_watch_events_total{resource="configmaps",type="ADDED"}'));
  return line ? Number(line.split(" ").pop()) : 0;
}

test("after a rebalance, the replica that gave shards up receives only its own shards' events", async () => {
  sandbox = await startSandbox({ shardSelectors: true });
  admin = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  await admin.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  const spans: Span[] = [];
  const replicas: ShardReplica[] = [];
  try {
    replicas.push(await shardReplica(sandbox, "n-first", NS, spans, { ms: 1, shards: SHARDS }, true));
    await eventually(() => heldBy("n-first").size === SHARDS, "the first replica to hold every shard", 10_000);
    const sinceSecond = sandbox.stats.log.length;
    replicas.push(await shardReplica(sandbox, "n-second", NS, spans, { ms: 1, shards: SHARDS }, true));
    await eventually(() => heldBy("n-first").size === SHARDS / 2 && heldBy("n-second").size === SHARDS / 2, "the shards split 4/4", 10_000);
    // The Leases split before the first replica's stream narrows (it relists once its handover is
    // through): wait for each replica's WATCH with a selector of its own shards only, or on a
    // loaded machine the 200 objects are created while the first still watches every shard. A
    // count of selected requests is not enough: the second replica's own LIST and WATCH make two
    // (the flake of issue 30, defect 14: measured 2.50 against a bound of 1.33 at load 5.9).
    const watched = () => sandbox.stats.log.slice(sinceSecond).flatMap((r) => {
      const selector = r.plural === "configmaps" && r.verb === "watch" ? new URLSearchParams(r.query).get("shardSelector") : null;
      return selector === null ? [] : [watchedShards(selector)];
    });
    const sameSet = (a: number[], b: Set<number>) => a.length === b.size && a.every((i) => b.has(i));
    // The first narrows its one stream to what it kept; the second opens a stream per shard taken.
    const narrowed = () => {
      const first = heldBy("n-first"), second = heldBy("n-second"), streams = watched();
      const secondCovered = new Set(streams.filter((w) => w.every((i) => second.has(i))).flat());
      return streams.some((w) => sameSet(w, first)) && sameSet([...secondCovered], second);
    };
    await eventually(narrowed, "the first replica's stream narrowed to its shards, and the second's streams started", 10_000);
    // Counted as the ADDED watch events each replica received (kobun_watch_events_total): an
    // object's ADDED reaches its owner, and the first replica too while it still watches every
    // shard. Bytes through each replica's proxy were counted before, and under load the answers
    // and echoes of the last writes, still in flight, made that split drift (issue 30, defect 14).
    const before = replicas.map(addedEvents);
    const sinceObjects = sandbox.stats.log.length;
    const objects = await Promise.all(Array.from({ length: 200 }, async (_, i) =>
      (await admin.create(CONFIGMAPS, NS, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}` } })).metadata.uid!));
    await eventually(() => new Set(completed(spans).map((s) => s.uid)).size >= objects.length, "every object handled", 15_000);
    const received = replicas.map((r, i) => addedEvents(r) - before[i]!);
    // Expected split: by how many of the objects fall in each replica's shards.
    const mine = objects.filter((uid) => heldBy("n-first").has(shardOf(objectHash({ metadata: { uid } }, "uid"), SHARDS))).length;
    console.log(`ADDED events received after the rebalance: ${received.join(" / ")}; ${mine} of ${objects.length} objects are the first replica's`);
    // Each replica got the ADDED of each of its own objects (it handled them all) and, narrowed, of
    // no other (measured: exactly its own); receiving everything would give the first all 200. The
    // bound is halfway, so a stray event (a stream restarted under load re-lists its objects) passes.
    const others = objects.length - mine;
    // A narrowed stream of the first's that started over with its initial events (a stall on a loaded
    // machine) hears its own objects' ADDED once more: at most `mine` each time (seen once: 224 / 176).
    const relisted = sandbox.stats.log.slice(sinceObjects).filter((r) => {
      const query = new URLSearchParams(r.query);
      const selector = query.get("shardSelector");
      return r.plural === "configmaps" && selector !== null && sameSet(watchedShards(selector), heldBy("n-first")) &&
        (r.verb === "list" || query.get("sendInitialEvents") === "true");
    }).length;
    expect(received[1]).toBeGreaterThanOrEqual(others);
    const bound = (1 + relisted) * mine + others / 2;
    expect({ first: received[0], relisted, within: received[0]! >= mine && received[0]! < bound })
      .toEqual({ first: received[0], relisted, within: true });
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
  }
}, 40_000);
