// Issue 31: the streams of one resource write ONE store (caching/), each on a shelf of its own. A
// namespace's relist (a freeze, then resume) deletes within its own stream, never the other
// namespace's objects; a stream that ends takes its objects out; a write's answer can be waited
// for, bounded, until the store has caught up with it.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { Store } from "../../src/caching/index.ts";
import { resolveSettings } from "../../src/config/index.ts";
import type { Resource } from "../../src/kube/types.ts";
import { Health } from "../../src/observability/health.ts";
import { runResourceStream } from "../../src/streams/resource-stream.ts";
import { streamTimings } from "../../src/runtime/stream-wiring.ts";
import { silentLogger } from "../../src/util/log.ts";
import { Toggle } from "../../src/util/toggle.ts";
import type { WatchEvent } from "../../src/watching/types.ts";
import { eventually } from "../runtime/helpers.ts";
import { cm, configmaps as CONFIGMAPS, env, type Env } from "../watching/helpers.ts";

const NAMESPACES: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: false };
let e: Env;
beforeAll(async () => void (e = await env()));
afterAll(() => e.stop());

const names = (store: Store) => store.list().map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();

test("two namespaces' streams share one store; a relist deletes only within its stream; an ended stream takes its objects out", async () => {
  for (const ns of ["one", "two"]) await e.client.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  for (const [ns, name] of [["one", "a"], ["one", "b"], ["two", "c"]] as const) await e.client.create(CONFIGMAPS, ns, cm(name, {}, ns));
  const store = new Store(CONFIGMAPS);
  const gates = { one: new Toggle(), two: new Toggle() };
  const stops = { one: new AbortController(), two: new AbortController() };
  const deleted: string[] = [];
  const timings = streamTimings(resolveSettings({}).watching);
  const streams = (["one", "two"] as const).map((ns) => runResourceStream({
    client: e.client, resource: CONFIGMAPS, namespace: ns, toggle: gates[ns], health: new Health(), logger: silentLogger, timings, store,
    deliver: (event: WatchEvent) => void (event.type === "deleted" && event.synthetic && deleted.push(`${ns}: ${event.object.metadata.name}`)),
  }, stops[ns].signal));
  try {
    await eventually(() => store.resourceVersion !== undefined && store.size === 3, "both streams listed");
    expect(names(store)).toEqual(["one/a", "one/b", "two/c"]);

    // Namespace one freezes, loses "b" meanwhile, and relists on resume: "b" goes, "two/c" stays.
    gates.one.freeze("test");
    await e.client.delete(CONFIGMAPS, "one", "b");
    gates.one.unfreeze("test");
    await eventually(() => deleted.length === 1, "the relist's synthetic deletion");
    expect(deleted).toEqual(["one: b"]);
    expect(names(store)).toEqual(["one/a", "two/c"]);

    // Reads never staler than our own writes: the answer's resourceVersion, waited for.
    const made = await e.client.create(CONFIGMAPS, "two", cm("d", {}, "two"));
    const version = made.metadata.resourceVersion!;
    const never = new AbortController().signal;
    expect(await store.until(version, { object: { name: "d", namespace: "two" }, signal: never, timeoutMs: 10_000 })).toBe(true);
    expect(store.get("d", "two")?.metadata.uid).toBe(made.metadata.uid);

    stops.two.abort();
    await streams[1];
    expect(names(store)).toEqual(["one/a"]);
  } finally {
    for (const stop of Object.values(stops)) stop.abort();
    await Promise.all(streams);
  }
});
