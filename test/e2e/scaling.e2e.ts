// Sharded replicas (issue 16) on each target, as real processes (dist/kobun-e2e with
// handlers/spans.ts: no two replicas share an event loop, so a loaded machine does not make one
// miss its renewals for the others' work), each behind a TCP proxy of its own to count the
// bytes it receives. Server-side: the real kube-apiserver with ShardedListAndWatch (and the
// sandbox); client-side: without the gate (and the sandbox with shardSelectors off).
//   3 replicas × N objects (KOBUN_E2E_SHARD_OBJECTS, default 3,000): each handled exactly once
//   (a second run only of a run that was in flight in a replica that gave its shard up), shares
//   within ±25 % of a third; one SIGKILLed: objects created meanwhile are handled within lease
//   duration + 2 s; a fourth replica joins: shards rebalance, no object in two handlers at once
//   (unless the first of the two was in a replica stalled past the lease margin, which no lease
//   can stop: counted and printed, README "Scaling out").
//
//   bun run build.ts --handlers test/e2e/handlers --outfile dist/kobun-e2e
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./scaling.e2e.ts

import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { objectHash } from "../../src/sharding/hash.ts";
import { shardOf } from "../../src/sharding/ranges.ts";
import { proxiedKubeconfig } from "../runtime/lease-replicas.ts";
import { startTcpProxy, type TcpProxy } from "../runtime/tcp-proxy.ts";
import { createNamespace } from "./harness/kube.ts";
import { KOBUN_E2E, ROOT, startOperator, type Operator } from "./harness/operator.ts";
import { CONFIGMAPS, completed, counts, createMany, giveUpsOf, holders, LEASE_MARGIN_MS, now, overlaps, SHARD_LEASE, SHARD_LEASE_MS, spansOf, stalledPastLease, until, type Span } from "./harness/shard-spans.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const N = Number(process.env.KOBUN_E2E_SHARD_OBJECTS ?? 3000);
const SHARDS = 12;
/** The binary's other handlers' resources must be served, or it does not start. */
const E2E_CRDS = join(ROOT, "test/e2e/handlers/kobunflaky.crd.yaml");

interface Replica { id: string; op: Operator; proxy: TcpProxy; file: string }

function startReplica(t: Target, dir: string, id: string, ns: string, config: string): Replica {
  const proxy = startTcpProxy(new URL(t.url));
  const kubeconfig = join(dir, `${id}.kubeconfig`);
  writeFileSync(kubeconfig, proxiedKubeconfig(readFileSync(t.kubeconfigPath, "utf8"), proxy.url), { mode: 0o600 });
  const file = join(dir, `${id}.jsonl`);
  return { id, proxy, file, op: startOperator(`shards-${id}`, kubeconfig, ["-n", ns, "--config", config], KOBUN_E2E, { KOBUN_E2E_SPANS: file }) };
}

/**
 * Objects run more than once where the guarantee does not allow it. Each run but the
 * last must have been taken from its replica: stopped by a handover or a lost lease (its signal
 * aborted: at least once, as promised), in flight when its replica was killed, or completed but
 * its result not written because its replica gave the shard up in between (logged at the stop,
 * before the Lease could go to anyone).
 */
function unexplainedReruns(spans: Span[], replicas: Replica[], killed: { id: string; at: number }): string[] {
  const giveUps = replicas.flatMap((r) => giveUpsOf(r.id, r.op.lines));
  const out: string[] = [];
  for (const [uid, runs] of Map.groupBy(spans, (s) => s.uid)) {
    if (runs.length < 2) continue;
    const shard = shardOf(objectHash({ metadata: { uid } }, "uid"), SHARDS);
    runs.sort((a, b) => a.start - b.start);
    const explained = runs.slice(0, -1).every((run, i) => {
      if (run.aborted) return true;
      if (run.replica === killed.id && run.start <= killed.at && (run.end ?? Infinity) + SHARD_LEASE_MS.duration >= killed.at) return true;
      // Log times have ms resolution; the write after the handler may take a while on a loaded machine.
      return giveUps.some((g) => g.replica === run.replica && g.shard === shard && g.at >= run.start - 1 && g.at <= runs[i + 1]!.start + 1 && g.at <= (run.end ?? Infinity) + SHARD_LEASE_MS.duration);
    });
    if (!explained) out.push(`${uid} (shard ${shard}): ${JSON.stringify(runs)}`);
  }
  return out;
}

for (const path of ["server-side", "client-side"] as const) {
  describe.each(selectedTargets())(`sharded replicas, ${path} filtering, against %s`, (targetName: TargetName) => {
    const need = targetSuite(targetName, {
      crds: [E2E_CRDS], cleanup: [],
      ...(path === "server-side" ? { apiserverArgs: ["--feature-gates=ShardedListAndWatch=true"] } : { sandbox: { shardSelectors: false } }),
    });

    test(`3 replicas × ${N} objects: each handled exactly once, shares ±25 %; one SIGKILLed: its objects handled within lease duration + 2 s; a fourth joins: zero overlap`, async () => {
      const t = need();
      const ns = await createNamespace(t.client, "e2e-shards");
      const dir = mkdtempSync(join(tmpdir(), "kobun-e2e-shards-"));
      const config = join(dir, "kobun.yaml");
      writeFileSync(config, JSON.stringify({
        sharding: { replicas: "auto", shards: SHARDS },
        peering: { name: ns, freezeGracePeriod: "500ms", lease: SHARD_LEASE },
        shutdown: { gracePeriod: "1s" },
        workers: { batchWindow: 0 },
      }));
      const replicas = ["r1", "r2", "r3"].map((id) => startReplica(t, dir, id, ns, config));
      const all = () => replicas.flatMap((r) => spansOf(r.id, r.file));
      const handledBy = (objects: { uid: string }[], not?: string) => { const seen = new Set(completed(all()).filter((s) => s.replica !== not).map((s) => s.uid)); return objects.filter((o) => !seen.has(o.uid)); };
      try {
        await until("12 shards held 4/4/4", async () => counts(await holders(t, ns)) === "4,4,4", 30_000).catch((error) => {
          for (const r of replicas) console.log(r.op.tail(15));
          throw error;
        });
        const applied = path === "server-side" ? /the API server applies shardSelector/ : /the API server ignores shardSelector/;
        expect(replicas.every((r) => r.op.logged(applied))).toBe(true);
        const started = performance.now();
        const first = await createMany(t, ns, "cm", N, 20);
        await until(`${N} objects handled`, () => handledBy(first).length === 0, 180_000);
        const wall = performance.now() - started;
        const firstUids = new Set(first.map((o) => o.uid));
        const shares = replicas.map((r) => new Set(completed(all()).filter((s) => s.replica === r.id && firstUids.has(s.uid)).map((s) => s.uid)).size / N);
        for (const share of shares) expect(Math.abs(share - 1 / 3) * 3).toBeLessThanOrEqual(0.25);
        console.log(`[${targetName} ${path}] ${N} objects in ${wall.toFixed(0)} ms; shares ${shares.map((s) => (s * 100).toFixed(1)).join("/")} %; bytes received ${replicas.map((r) => r.proxy.bytesReceived).join("/")}`);

        // Their writes landed too, so the kill below finds no backlog of this first wave.
        await until("the first objects' results written", async () => {
          const listed = await t.client.list(CONFIGMAPS, { namespace: ns, labelSelector: "e2e.kobun.dev/spans=yes" });
          return listed.items.filter((o) => o.metadata.annotations?.["kobun.dev/last-handled-configuration"]).length >= N;
        }, 60_000);

        // SIGKILL r1: no goodbye, its Leases are left to expire.
        const cut = replicas[0]!;
        cut.op.kill();
        const killed = { id: cut.id, at: now() };
        await cut.op.exited(5000);
        const meanwhile = await createMany(t, ns, "meanwhile", 100, 20);
        await until("objects created after the kill handled", () => handledBy(meanwhile, cut.id).length === 0, 20_000).catch((error) => {
          console.log(`unhandled: ${handledBy(meanwhile, cut.id).length}`, replicas.slice(1).map((r) => r.op.tail(15)).join("\n---\n"));
          throw error;
        });
        const late = Math.max(...meanwhile.map((o) => Math.min(...completed(all()).filter((s) => s.uid === o.uid).map((s) => s.start)) - o.at));
        console.log(`[${targetName} ${path}] after the kill: the slowest new object started ${late.toFixed(0)} ms after its creation`);
        expect(late).toBeLessThanOrEqual(SHARD_LEASE_MS.duration + 2000);

        // A fourth replica joins while objects keep coming.
        const more = createMany(t, ns, "join", 300, 20);
        replicas.push(startReplica(t, dir, "r4", ns, config));
        const joined = await more;
        await until("the three live replicas hold 4/4/4", async () => { const held = await holders(t, ns); return counts(held) === "4,4,4" && !held.has(cut.id); }, 30_000);
        await until("objects created during the join handled", () => handledBy(joined).length === 0, 30_000);

        // Exactly once: one completed run per object; any other run explained by a handover or the kill.
        const spans = all();
        const objects = [...first, ...meanwhile, ...joined];
        const runsOf = Map.groupBy(completed(spans), (s) => s.uid);
        expect(objects.filter((o) => (runsOf.get(o.uid) ?? []).length === 0)).toEqual([]);
        expect(unexplainedReruns(spans, replicas, killed)).toEqual([]);
        const reruns = [...Map.groupBy(spans, (s) => s.uid).values()].filter((l) => l.length > 1).length;
        console.log(`[${targetName} ${path}] ${reruns} objects re-run after a handover or the kill (their first run in flight then)`);
        // Zero overlap: a run killed in flight lasted until the kill; one whose replica stalled
        // past the lease margin meanwhile could not know its lease had gone (counted, printed).
        const endOf = (s: Span) => s.end ?? (s.replica === cut.id ? killed.at : Infinity);
        const stalled = overlaps(spans, endOf).length - overlaps(spans, endOf, (s) => stalledPastLease(s, 20)).length;
        console.log(`[${targetName} ${path}] ${stalled} overlaps of a run whose replica stalled past the lease margin (${LEASE_MARGIN_MS} ms)`);
        expect(overlaps(spans, endOf, (s) => stalledPastLease(s, 20))).toEqual([]);
      } finally {
        for (const r of replicas) r.op.kill();
        await Promise.all(replicas.map((r) => r.op.stop("SIGKILL", 5000).catch(() => {})));
        for (const r of replicas) r.proxy.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }, 300_000);
  });
}
