// A shard taken while its stream is in a LIST (client-side filtering): the pages before the take
// dropped that shard's objects, so the stream lists again, and every object of it is delivered.
// Found by review: before, only a stream already watching replayed its objects, and the objects of
// the early pages got no cycle until they changed again. The server-side path is the control (a
// taken shard gets a stream and a LIST of its own). The real serveShardStreams and
// runResourceStream against the sandbox, with a Sharding whose shards the test takes.

import { afterAll, expect, test } from "bun:test";
import { Store } from "../../src/caching/index.ts";
import { resolveSettings } from "../../src/config/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { Health } from "../../src/observability/health.ts";
import { runResourceStream } from "../../src/streams/resource-stream.ts";
import { streamTimings } from "../../src/runtime/stream-wiring.ts";
import { serveShardStreams, type StreamPart } from "../../src/streams/shard-streams.ts";
import { startSandbox } from "@kobun/sandbox";
import { objectHash, shardOf, type Sharding } from "../../src/sharding/index.ts";
import { silentLogger } from "../../src/util/log.ts";
import { TaskScope } from "../../src/util/scope.ts";
import { Toggle } from "../../src/util/toggle.ts";
import type { WatchEvent } from "../../src/watching/types.ts";
import { eventually } from "../runtime/helpers.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const SHARDS = 4;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function takeMidList(serverSide: boolean): Promise<{ expected: number; missing: number }> {
  const sandbox = await startSandbox({ shardSelectors: serverSide });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  cleanups.push(async () => {
    client.close();
    await sandbox.stop();
  });
  const uids = await Promise.all(Array.from({ length: 400 }, async (_, i) =>
    (await client.create(CONFIGMAPS, "default", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}` } })).metadata.uid!));
  const shardOfObject = (o: Pick<KubeObject, "metadata">) => shardOf(objectHash(o, "uid"), SHARDS);
  const held = new Set([0]);
  const listeners = new Set<(owned: readonly number[]) => void>();
  const sharding = {
    get owned() { return [...held].sort(); },
    owns: (o: Pick<KubeObject, "metadata">) => held.has(shardOfObject(o)),
    shardOf: shardOfObject,
    onChange(fn: (owned: readonly number[]) => void) { listeners.add(fn); return () => listeners.delete(fn); },
    leases: { holds: { has: (i: number) => held.has(i) } },
  } as unknown as Sharding;
  const take = (shard: number) => {
    held.add(shard);
    for (const listener of listeners) listener(sharding.owned);
  };
  const scope = new TaskScope("take-mid-list");
  const delivered = new Set<string>();
  let listed = 0;
  let done = 0;
  const open = (part: StreamPart, signal: AbortSignal) => {
    const deliver = (event: WatchEvent) => {
      part.saw?.(event); // as streams/layout.ts's deliver does
      // Mid-LIST, synchronously between two pages, as a lease round can land.
      if (event.type === "listed" && ++listed === 40) take(1);
      if (event.type === "relist-done") done++;
      if ("object" in event && !part.accepts(event.object)) return;
      if ("object" in event && event.type !== "deleted") delivered.add(event.object.metadata.uid!);
    };
    return runResourceStream({
      client, resource: CONFIGMAPS, namespace: "default", toggle: new Toggle(), health: new Health(), logger: silentLogger, store: new Store(CONFIGMAPS), deliver,
      timings: streamTimings(resolveSettings({ fileData: { watching: { pageSize: 50 } } }).watching),
      ...(part.shardSelector ? { shardSelector: part.shardSelector } : {}),
      ...(part.restartSignal ? { restartSignal: part.restartSignal } : {}),
    }, signal);
  };
  try {
    serveShardStreams({ sharding, key: "uid", shards: SHARDS, serverSide, within: scope, name: "watch", open });
    // Server-side: the first batch's LIST, then the taken shard's own.
    await eventually(() => done >= (serverSide ? 2 : 1), "the LISTs to end", 10_000);
  } finally {
    await scope.close(1000);
  }
  const expected = uids.filter((uid) => held.has(shardOfObject({ metadata: { uid } })));
  return { expected: expected.length, missing: expected.filter((uid) => !delivered.has(uid)).length };
}

test("client-side filtering: every object of a shard taken mid-LIST is delivered once the LIST ends", async () => {
  const result = await takeMidList(false);
  expect(result.expected).toBeGreaterThan(0);
  expect(result).toEqual({ ...result, missing: 0 });
}, 30_000);

test("server-side sharding (control): every object of a shard taken mid-LIST is delivered", async () => {
  const result = await takeMidList(true);
  expect(result).toEqual({ ...result, missing: 0 });
}, 30_000);
