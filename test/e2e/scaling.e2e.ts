// Sharded replicas (issue 16) on each target, in-process, each behind a TCP proxy of its own
// (to count the bytes it receives, and to cut it off as a SIGKILL would: no goodbye, its Leases
// left to expire). Server-side: the real kube-apiserver with ShardedListAndWatch (and the
// sandbox); client-side: without the gate (and the sandbox with shardSelectors off).
//   3 replicas × N objects (KOBUN_E2E_SHARD_OBJECTS, default 3,000): each handled exactly once,
//   shares within ±25 % of a third; one replica cut off: objects created meanwhile are handled
//   within lease duration + 2 s; a fourth replica joins: no object in two handlers at once.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./scaling.e2e.ts

import { describe, expect, test } from "bun:test";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { eventually } from "../runtime/helpers.ts";
import { completed, overlaps, shardReplica, type Span } from "../runtime/shard-replicas.ts";
import { createNamespace } from "./harness/kube.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const LEASES: Resource = { group: "coordination.k8s.io", version: "v1", plural: "leases", kind: "Lease", namespaced: true, statusSubresource: false };
const N = Number(process.env.KOBUN_E2E_SHARD_OBJECTS ?? 3000);
const replica = (t: Target, id: string, namespace: string, spans: Span[]) => shardReplica(t, id, namespace, spans, { ms: 20 }, true);

async function shardsHeld(t: Target, namespace: string): Promise<number[]> {
  const leases = await t.client.list(LEASES, { namespace, labelSelector: "kobun.dev/shard-role=shard" });
  const held = new Map<string, number>();
  for (const lease of leases.items) {
    const holder = (lease.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
    if (holder) held.set(holder, (held.get(holder) ?? 0) + 1);
  }
  return [...held.values()].sort((a, b) => a - b);
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await Bun.sleep(100);
  }
}

/** Creates `count` ConfigMaps, 25 at a time; returns them with their creation time (performance clock). */
async function createMany(t: Target, namespace: string, prefix: string, count: number): Promise<{ uid: string; at: number }[]> {
  const made: { uid: string; at: number }[] = [];
  for (let i = 0; i < count; i += 25) {
    const batch = Array.from({ length: Math.min(25, count - i) }, (_, j) =>
      t.client.create(CONFIGMAPS, namespace, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${prefix}-${i + j}` } }).then((o: KubeObject) => ({ uid: o.metadata.uid!, at: performance.now() })));
    made.push(...(await Promise.all(batch)));
  }
  return made;
}

for (const path of ["server-side", "client-side"] as const) {
  describe.each(selectedTargets())(`sharded replicas, ${path} filtering, against %s`, (targetName: TargetName) => {
    const need = targetSuite(targetName, {
      crds: [], cleanup: [],
      ...(path === "server-side" ? { apiserverArgs: ["--feature-gates=ShardedListAndWatch=true"] } : { sandbox: { shardSelectors: false } }),
    });

    test(`3 replicas × ${N} objects: each handled exactly once, shares ±25 %; one cut off: its objects handled within lease duration + 2 s; a fourth joins: zero overlap`, async () => {
      const t = need();
      const ns = await createNamespace(t.client, "e2e-shards");
      const spans: Span[] = [];
      const replicas = await Promise.all(["r1", "r2", "r3"].map((id) => replica(t, id, ns, spans)));
      try {
        await until("16 shards held 6/5/5", async () => (await shardsHeld(t, ns)).join() === "5,5,6", 20_000);
        const applied = replicas.every((r) => r.lines.some((l) => l.includes(path === "server-side" ? "the API server applies shardSelector" : "the API server ignores shardSelector")));
        expect(applied).toBe(true);
        const started = performance.now();
        const first = await createMany(t, ns, "cm", N);
        await eventually(() => new Set(completed(spans).map((s) => s.uid)).size >= N, `${N} objects handled`, 180_000);
        const wall = performance.now() - started;
        await Bun.sleep(500); // a second handling would show up by now
        const done = completed(spans);
        const perUid = Map.groupBy(done, (s) => s.uid);
        expect([...perUid.keys()].sort()).toEqual(first.map((o) => o.uid).sort());
        expect([...perUid.values()].filter((l) => l.length !== 1).length).toBe(0);
        const shares = replicas.map((r) => done.filter((s) => s.replica === r.id).length / N);
        for (const share of shares) expect(Math.abs(share - 1 / 3) * 3).toBeLessThanOrEqual(0.25);
        console.log(`[${targetName} ${path}] ${N} objects in ${wall.toFixed(0)} ms; shares ${shares.map((s) => (s * 100).toFixed(1)).join("/")} %; bytes received ${replicas.map((r) => r.proxy!.bytesReceived).join("/")}`);

        // "SIGKILL" r1: its path goes dead; its Leases are left to expire.
        const [cut, ...alive] = replicas;
        cut!.proxy!.blackhole();
        const meanwhile = await createMany(t, ns, "meanwhile", 100);
        const handledElsewhere = () => { const seen = new Set(completed(spans).filter((s) => s.replica !== "r1").map((s) => s.uid)); return meanwhile.filter((o) => !seen.has(o.uid)); };
        await eventually(() => handledElsewhere().length === 0, "objects created after the cut handled", 20_000).catch((error) => {
          console.log(`unhandled: ${handledElsewhere().length}`, alive.map((r) => r.lines.filter((l) => /shard|WARN|ERROR/.test(l)).slice(-15).join("\n")).join("\n---\n"));
          throw error;
        });
        const late = Math.max(...meanwhile.map((o) => completed(spans).find((s) => s.uid === o.uid && s.replica !== "r1")!.start - o.at));
        console.log(`[${targetName} ${path}] after the cut: the slowest new object started ${late.toFixed(0)} ms after its creation`);
        expect(late).toBeLessThanOrEqual(3000 + 2000);
        void cut!.stop(); // ends by its own timeouts; it cannot reach the server to say goodbye
        replicas.splice(0, 1);

        // A fourth replica joins while objects keep coming.
        const more = createMany(t, ns, "join", 300);
        replicas.push(await replica(t, "r4", ns, spans));
        const joined = await more;
        await until("the three live replicas hold 6/5/5", async () => (await shardsHeld(t, ns)).join() === "5,5,6", 20_000);
        await eventually(() => joined.every((o) => completed(spans).some((s) => s.uid === o.uid)), "objects created during the join handled", 30_000);
        expect(overlaps(spans)).toEqual([]);
        expect(alive.length).toBe(2);
      } finally {
        await Promise.all(replicas.map((r) => r.stop()));
      }
    }, 300_000);
  });
}
