// Sharded replicas as real processes (the compiled dist/kobun-e2e, test/e2e/handlers/spans.ts)
// on each target, one of them killed with SIGKILL (issue 16): its shards are taken over by the
// two left after their lease duration; objects created meanwhile are handled within lease
// duration + 2 s; every object is handled exactly once, the only re-runs are of objects whose
// handler was in flight in the killed process, and no object is ever inside two handlers at
// once (each run's start and end are on record, the killed runs end at the kill).
// 240 objects (not scaling.e2e.ts's 3,000: it measures shares, bytes and a join on both
// filtering paths; here the point is runs in flight in a process that dies).
//
//   bun run build.ts --handlers test/e2e/handlers --outfile dist/kobun-e2e
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./scaling-kill.e2e.ts

import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNamespace } from "./harness/kube.ts";
import { KOBUN_E2E, ROOT, startOperator, type Operator } from "./harness/operator.ts";
import { CONFIGMAPS, counts, createMany, holders, now, overlaps, SHARD_LEASE, SHARD_LEASE_MS, spansOf, until, type Span } from "./harness/shard-spans.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

/** The binary's other handlers' resources must be served, or it does not start. */
const E2E_CRDS = join(ROOT, "test/e2e/handlers/kobunflaky.crd.yaml");

describe.each(selectedTargets())("sharded replicas as processes, one killed with SIGKILL, against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [E2E_CRDS], cleanup: [] });

  test("SIGKILL one of 3: its shards are taken over, objects created meanwhile handled within lease duration + 2 s, exactly once, no overlapping runs", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-kill");
    const dir = mkdtempSync(join(tmpdir(), "kobun-e2e-kill-"));
    const config = join(dir, "kobun.yaml");
    writeFileSync(config, JSON.stringify({
      sharding: { replicas: "auto", shards: 12 },
      peering: { name: ns, freezeGracePeriod: "500ms", lease: SHARD_LEASE },
      shutdown: { gracePeriod: "1s" },
      workers: { batchWindow: 0 },
    }));
    const files = { r1: join(dir, "r1.jsonl"), r2: join(dir, "r2.jsonl"), r3: join(dir, "r3.jsonl") };
    const spans = () => Object.entries(files).flatMap(([replica, file]) => spansOf(replica, file));
    const done = () => spans().filter((s) => s.end !== undefined && !s.aborted);
    const handled = (objects: { uid: string }[], not?: string) => { const seen = new Set(done().filter((s) => s.replica !== not).map((s) => s.uid)); return objects.every((o) => seen.has(o.uid)); };
    const ops: Record<string, Operator> = {};
    for (const [replica, file] of Object.entries(files)) {
      ops[replica] = startOperator(`kill-${replica}-${targetName}`, t.kubeconfigPath, ["-n", ns, "--config", config], KOBUN_E2E, { KOBUN_E2E_SPANS: file });
    }
    try {
      await until("12 shards held 4/4/4", async () => counts(await holders(t, ns)) === "4,4,4", 20_000).catch((error) => {
        for (const op of Object.values(ops)) console.log(op.tail(15));
        throw error;
      });
      const first = await createMany(t, ns, "cm", 240, 20);
      await until("the first objects handled", () => handled(first), 30_000);
      // Their writes landed too: no run of the killed replica is between its handler's end and its patch.
      await until("the first objects' results written", async () => {
        const listed = await t.client.list(CONFIGMAPS, { namespace: ns, labelSelector: "e2e.kobun.dev/spans=yes" });
        return listed.items.filter((o) => o.metadata.annotations?.["kobun.dev/last-handled-configuration"]).length >= first.length;
      }, 10_000);

      // Slow handlers, so that the killed replica has runs in flight when it dies.
      const slow = await createMany(t, ns, "slow", 30, 1500);
      await until("every slow object started", () => { const started = new Set(spans().map((s) => s.uid)); return slow.every((o) => started.has(o.uid)); }, 10_000);
      const before = await holders(t, ns);
      ops.r1!.kill();
      const killedAt = now();
      await ops.r1!.exited(5000);
      const meanwhile = await createMany(t, ns, "meanwhile", 60, 20);

      await until("the killed replica's shards held by the other two, 6/6", async () => counts(await holders(t, ns)) === "6,6", SHARD_LEASE_MS.duration + 5000);
      const takenOver = now() - killedAt;
      await until("objects created after the kill, and the slow ones, handled elsewhere", () => handled(meanwhile, "r1") && handled(slow, "r1"), 15_000);
      const all = spans();
      const late = Math.max(...meanwhile.map((o) => Math.min(...all.filter((s) => s.uid === o.uid).map((s) => s.start)) - o.at));
      const inFlight = all.filter((s) => s.replica === "r1" && s.end === undefined);
      console.log(`[${targetName}] held before the kill ${counts(before)}; taken over ${takenOver.toFixed(0)} ms after it; the slowest object created meanwhile started ${late.toFixed(0)} ms after its creation; ${inFlight.length} runs in flight in the killed replica`);
      expect(late).toBeLessThanOrEqual(SHARD_LEASE_MS.duration + 2000);
      expect(inFlight.length).toBeGreaterThan(0);

      // Exactly once: one completed run per object; a second run only where the killed one was in flight.
      const byUid = Map.groupBy(all, (s) => s.uid);
      const objects = [...first, ...slow, ...meanwhile];
      expect(objects.filter((o) => (byUid.get(o.uid) ?? []).filter((s) => s.end !== undefined && !s.aborted).length !== 1)).toEqual([]);
      const inFlightUids = new Set(inFlight.map((s) => s.uid));
      // Said before the assertion, so that a failure shows each extra run, relative to the kill.
      for (const [uid, runs] of byUid) if (runs.length > 1 && !(runs.length === 2 && inFlightUids.has(uid))) console.log(uid, JSON.stringify(runs.map((r) => ({ ...r, start: r.start - killedAt, end: (r.end ?? NaN) - killedAt }))));
      expect([...byUid].filter(([uid, runs]) => runs.length > 1 && !(runs.length === 2 && inFlightUids.has(uid))).map(([uid]) => uid)).toEqual([]);
      // Zero overlap: a run killed in flight lasted until the kill.
      expect(overlaps(all, (s: Span) => s.end ?? (s.replica === "r1" ? killedAt : Infinity))).toEqual([]);
    } finally {
      for (const op of Object.values(ops)) op.kill();
      await Promise.all(Object.values(ops).map((op) => op.stop("SIGKILL", 5000).catch(() => {})));
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
