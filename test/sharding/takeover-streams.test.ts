// A takeover touches only the shards that changed (issue 16): when a replica dies, the survivors
// start its shards and nothing else. On a server that applies shardSelector, the only LISTs and
// new WATCHes after the death are of the dead replica's ranges; on one that ignores it, each
// survivor's unfiltered stream lists again, once per take (what it had of those shards may
// predate the dead replica's last writes: shard-takeover-progress.test.ts). On that path the
// shards kept see that relist as no-ops; every object created meanwhile is handled.

import { afterAll, expect, test } from "bun:test";
import { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { mergedRanges, parseShardSelector, type HashRange } from "../../src/sharding/index.ts";
import { eventually } from "../runtime/helpers.ts";
import { completed, shardReplica, type ShardReplica, type Span } from "../runtime/shard-replicas.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const NAMESPACES: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
const SHARDS = 8;
const started: { sandbox: Sandbox; admin: KubeClient }[] = [];
afterAll(async () => {
  for (const { sandbox, admin } of started) {
    admin.close();
    await sandbox.stop();
  }
});

/** The shard indexes each replica holds, from the Leases as the sandbox stores them. */
function heldShards(sandbox: Sandbox, ns: string): Map<string, number[]> {
  const held = new Map<string, number[]>();
  for (const lease of sandbox.store.objects("coordination.k8s.io", "leases", ns)) {
    const index = /-shard-(\d+)$/.exec(lease.metadata.name ?? "")?.[1];
    const holder = lease.spec?.holderIdentity;
    if (index !== undefined && holder) held.set(holder, [...(held.get(holder) ?? []), Number(index)].sort((a, b) => a - b));
  }
  return held;
}

/** A LIST or WATCH of ConfigMaps after the victim died: its shardSelector, and whether it asked for the initial state. */
interface Request { selector: string; initial: boolean }

const shares = (held: Map<string, number[]>) => [...held.values()].map((s) => s.length).sort().join();
const within = (range: HashRange, of: HashRange[]) => of.some((r) => r.start <= range.start && range.end <= r.end);

async function takeOver(serverSide: boolean): Promise<{ lists: Request[]; watches: Request[]; victimRanges: HashRange[]; victimShards: number }> {
  const sandbox = await startSandbox({ shardSelectors: serverSide });
  const admin = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  started.push({ sandbox, admin });
  const ns = `takeover-${serverSide ? "server" : "client"}`;
  await admin.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  const spans: Span[] = [];
  const create = async (prefix: string, n: number) =>
    Promise.all(Array.from({ length: n }, async (_, i) => (await admin.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${prefix}-${i}` } })).metadata.uid!));
  const handled = (uids: string[]) => { const done = new Set(completed(spans).map((s) => s.uid)); return uids.every((u) => done.has(u)); };
  const replicas: ShardReplica[] = [];
  try {
    // Only the victim behind a proxy: black-holed, it is gone as after a SIGKILL (no release), and none of its requests reaches the server.
    replicas.push(await shardReplica(sandbox, "t-victim", ns, spans, { ms: 5, shards: SHARDS }, true));
    replicas.push(...(await Promise.all(["t-a", "t-b"].map((id) => shardReplica(sandbox, id, ns, spans, { ms: 5, shards: SHARDS })))));
    await eventually(() => shares(heldShards(sandbox, ns)) === "2,3,3", `${SHARDS} shards held 3/3/2`, 10_000);
    const first = await create("first", 20);
    await eventually(() => handled(first), "the first objects handled", 10_000);
    const victimShards = heldShards(sandbox, ns).get("t-victim")!;
    const mark = sandbox.stats.log.length;
    replicas[0]!.proxy!.blackhole();
    const meanwhile = await create("meanwhile", 20);
    await eventually(() => shares(heldShards(sandbox, ns)) === "4,4", "the victim's shards taken over, 4/4", 10_000);
    await eventually(() => handled(meanwhile) && spans.filter((s) => meanwhile.includes(s.uid)).every((s) => s.replica !== "t-victim"), "every object created meanwhile handled by a survivor", 10_000);
    const requests = sandbox.stats.log.slice(mark).filter((r) => r.plural === "configmaps");
    const selectors = (verb: string) => requests.filter((r) => r.verb === verb).map((r) => {
      const query = new URLSearchParams(r.query);
      return { selector: query.get("shardSelector") ?? "(none)", initial: query.get("sendInitialEvents") === "true" };
    });
    return { lists: selectors("list"), watches: selectors("watch"), victimRanges: mergedRanges(victimShards, SHARDS), victimShards: victimShards.length };
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
  }
}

test("server-side sharding: taking over a dead replica's shards lists and watches only its ranges; the survivors' other streams are not restarted", async () => {
  const { lists, watches, victimRanges } = await takeOver(true);
  // The fresh state of the ranges taken: a LIST, or a streaming list (a WATCH with sendInitialEvents).
  expect(lists.length + watches.filter((w) => w.initial).length).toBeGreaterThan(0);
  for (const { selector } of [...lists, ...watches]) {
    expect(selector).not.toBe("(none)");
    const outside = parseShardSelector(selector).ranges.filter((range) => !within(range, victimRanges));
    expect({ selector, outside }).toEqual({ selector, outside: [] });
  }
}, 30_000);

test("client-side filtering: taking over a dead replica's shards relists the survivors' unfiltered streams, once per take (what they had may predate the dead replica's last writes)", async () => {
  const { lists, watches, victimShards } = await takeOver(false);
  const fresh = [...lists, ...watches.filter((w) => w.initial)];
  expect(fresh.length).toBeGreaterThanOrEqual(1); // (a survivor whose taken shards got no new object may relist after the test looked)
  expect(fresh.length).toBeLessThanOrEqual(victimShards); // at most one per shard taken
  expect(fresh.every((r) => r.selector === "(none)")).toBe(true);
}, 30_000);
