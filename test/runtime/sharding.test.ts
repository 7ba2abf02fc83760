// Sharded replicas in one process against the sandbox: every object is handled by exactly one
// replica, the shares are even, and when a replica joins or leaves no object is ever inside two
// replicas' handlers at once (a handler records its start and end per object).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/handling/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { Logger, memorySink } from "../../src/util/log.ts";
import { eventually } from "./helpers.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const LEASE = { duration: "3s", renewDeadline: "2s", retryPeriod: "250ms" };

/** One handler run; `aborted`: its signal aborted (a handover), so its result was not written. */
interface Span { replica: string; uid: string; start: number; end?: number; aborted?: boolean }

let sandbox: Sandbox;
let admin: KubeClient;
beforeAll(async () => {
  sandbox = await startSandbox();
  admin = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
});
afterAll(async () => {
  admin.close();
  await sandbox.stop();
});

async function replica(id: string, namespace: string, spans: Span[], work: { ms: number; deaf?: boolean } = { ms: 20 }, sandboxed = sandbox) {
  const client = await KubeClient.connect({ kubeconfig: sandboxed.kubeconfigPath });
  const registry = new Registry();
  registry.on.create("v1/configmaps", async ({ signal, uid }) => {
    const span: Span = { replica: id, uid: uid!, start: performance.now() };
    spans.push(span);
    try {
      // I/O-bound work; a "deaf" one ignores its signal, so only the handover's wait keeps it from overlapping
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, work.ms);
        if (!work.deaf) signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
      });
      if (signal.aborted) throw signal.reason;
    } finally {
      span.end = performance.now();
      span.aborted = signal.aborted;
    }
  }, { id: "record" });
  const sink = memorySink("debug");
  const controller = new AbortController();
  const settings = resolveSettings({
    fileData: {
      sharding: { replicas: "auto", shards: 16 },
      peering: { name: namespace, freezeGracePeriod: "500ms", lease: LEASE },
      shutdown: { gracePeriod: "1s" },
      workers: { batchWindow: 0 },
    },
    flags: { namespaces: [namespace] },
  });
  const running = run({ signal: controller.signal, client, registry, logger: new Logger(sink), settings, peerId: id });
  return {
    id, lines: sink.lines,
    async stop() { controller.abort(); await running; client.close(); },
  };
}

/** Shard Leases held per replica, as the sandbox stores them. */
function shardsHeld(namespace: string, sandboxed = sandbox): Map<string, number> {
  const held = new Map<string, number>();
  for (const lease of sandboxed.store.objects("coordination.k8s.io", "leases", namespace)) {
    if (lease.metadata.labels?.["kobun.dev/shard-group"] !== `kobun-${namespace}` || lease.metadata.labels?.["kobun.dev/shard-role"] !== "shard") continue;
    const holder = lease.spec?.holderIdentity;
    if (holder) held.set(holder, (held.get(holder) ?? 0) + 1);
  }
  return held;
}

async function createMany(namespace: string, count: number, prefix: string): Promise<string[]> {
  const uids: string[] = [];
  for (let i = 0; i < count; i++) uids.push((await admin.create(CONFIGMAPS, namespace, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${prefix}-${i}` } })).metadata.uid!);
  return uids;
}

function overlaps(spans: Span[]): string[] {
  const found: string[] = [];
  const byUid = Map.groupBy(spans, (s) => s.uid);
  for (const [uid, list] of byUid) for (const a of list) for (const b of list) {
    if (a !== b && a.replica !== b.replica && a.start < (b.end ?? Infinity) && b.start < (a.end ?? Infinity)) found.push(`${uid}: ${a.replica} and ${b.replica}`);
  }
  return found;
}

async function namespace(name: string): Promise<string> {
  await admin.create({ group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true }, null, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  return name;
}

test("three sharded replicas: every object handled exactly once, each replica's share within ±25 % of a third", async () => {
  const ns = await namespace("shard-three");
  const spans: Span[] = [];
  const replicas = await Promise.all(["r-a", "r-b", "r-c"].map((id) => replica(id, ns, spans)));
  try {
    await eventually(() => [...shardsHeld(ns).values()].sort().join() === "5,5,6", "16 shards held 6/5/5", 10_000);
    const uids = await createMany(ns, 600, "cm");
    await eventually(() => new Set(spans.filter((s) => s.end !== undefined && !s.aborted).map((s) => s.uid)).size === 600, "600 objects handled", 30_000);
    await Bun.sleep(300); // a second handling of any object would show up now
    // A handler aborted by a handover (a shard moving under a loaded machine's late renewal)
    // wrote nothing and ran again on the new owner; every object completes exactly once.
    const completed = spans.filter((s) => !s.aborted);
    const perUid = Map.groupBy(completed, (s) => s.uid);
    expect([...perUid.keys()].sort()).toEqual([...uids].sort());
    expect([...perUid.entries()].filter(([, l]) => l.length !== 1).map(([uid, l]) => `${uid}: ${l.map((x) => x.replica)}`)).toEqual([]);
    expect(overlaps(spans)).toEqual([]);
    for (const r of replicas) {
      const share = completed.filter((s) => s.replica === r.id).length / 600;
      expect(Math.abs(share - 1 / 3) / (1 / 3)).toBeLessThanOrEqual(0.25);
    }
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
  }
}, 60_000);

test("a fourth replica joins and one leaves while objects arrive: shards rebalance, no object is in two replicas' handlers at once, all are handled", async () => {
  const ns = await namespace("shard-join");
  const spans: Span[] = [];
  // Handlers that take 300 ms and ignore their signal (within the 500 ms grace): a handover finds
  // some running in the shards it gives up, and must wait for them before releasing.
  const slow = { ms: 300, deaf: true };
  const replicas = await Promise.all(["j-a", "j-b", "j-c"].map((id) => replica(id, ns, spans, slow)));
  const stopped: (typeof replicas)[number][] = [];
  try {
    await eventually(() => [...shardsHeld(ns).values()].sort().join() === "5,5,6", "16 shards held 6/5/5", 10_000);
    const first = createMany(ns, 300, "before");
    const fourth = await replica("j-d", ns, spans, slow);
    replicas.push(fourth);
    const uids = await first;
    await eventually(() => [...shardsHeld(ns).values()].sort().join() === "4,4,4,4", "rebalanced 4/4/4/4", 15_000);
    const leaving = replicas.shift()!;
    stopped.push(leaving);
    const second = createMany(ns, 300, "after");
    await leaving.stop();
    uids.push(...(await second));
    await eventually(() => [...shardsHeld(ns).values()].sort().join() === "5,5,6", "the three left hold 6/5/5", 15_000);
    const done = () => new Set(spans.filter((s) => s.end !== undefined).map((s) => s.uid));
    await eventually(() => uids.every((u) => done().has(u)), "every object handled", 30_000);
    expect(overlaps(spans)).toEqual([]);
    const written = async () => (await admin.list(CONFIGMAPS, { namespace: ns })).items.filter((o) => o.metadata.annotations?.["kobun.dev/last-handled-configuration"]).length;
    const deadline = Date.now() + 15_000;
    while ((await written()) < 600 && Date.now() < deadline) await Bun.sleep(50);
    expect(await written()).toBe(600);
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
  }
}, 90_000);
