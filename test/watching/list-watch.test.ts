// LIST then WATCH against the sandbox over loopback: paging, the WATCH query, live events,
// bookmarks, the server's own timeout, and objects that arrive in many chunks.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { Watcher } from "../../src/watching/watcher.ts";
import { Collector, cm, configmaps, env, eventually, queryOf, type Env, watchOpen } from "./helpers.ts";

let e: Env;
beforeEach(async () => {
  e = await env({ bookmarkIntervalMs: 50 });
});
afterEach(async () => {
  await e.stop();
});

test("the initial LIST is paged with limit/continue and emitted as relist-start, listed*, relist-done", async () => {
  for (let i = 0; i < 5; i++) await e.client.create(configmaps, "default", cm(`cm-${i}`));
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", pageSize: 2, streamingList: "never" });
  const c = new Collector(watcher);
  await c.untilEvent("relist-done");
  await c.stop();
  expect(c.events.map((x) => x.type)).toEqual(["relist-start", "listed", "listed", "listed", "listed", "listed", "relist-done"]);
  const lists = e.sandbox.stats.log.filter((r) => r.verb === "list").map((r) => new URLSearchParams(r.query));
  expect(lists.length).toBe(3);
  expect(lists.map((q) => q.get("limit"))).toEqual(["2", "2", "2"]);
  expect(lists[0]!.get("continue")).toBeNull();
  expect(lists[1]!.get("continue")).toBeTruthy();
  expect(lists[2]!.get("continue")).toBeTruthy();
  expect(lists.every((q) => !q.has("resourceVersion"))).toBe(true);
  expect(watcher.known.size).toBe(5);
});

test("listed objects of built-in kinds get the apiVersion and kind a real LIST leaves out", async () => {
  await e.client.create(configmaps, "default", cm("typed"));
  const raw = (await e.client.list(configmaps, { namespace: "default" })).items[0]!;
  expect(raw.kind).toBeUndefined(); // as kube-apiserver sends LIST items of built-in kinds
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const c = new Collector(watcher);
  await c.untilEvent("relist-done");
  await c.stop();
  const listed = c.events.find((x) => x.type === "listed");
  expect(listed && "object" in listed ? [listed.object.apiVersion, listed.object.kind] : []).toEqual(["v1", "ConfigMap"]);
});

test("the default page size is 500", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const c = new Collector(watcher);
  await c.untilEvent("relist-done");
  await c.stop();
  expect(queryOf(e.sandbox, "list", 0).get("limit")).toBe("500");
});

test("the WATCH starts from the LIST's resourceVersion with bookmarks and a jittered server timeout", async () => {
  await e.client.create(configmaps, "default", cm("one"));
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never", serverTimeoutSeconds: 100 });
  const c = new Collector(watcher);
  const opened = e.sandbox.waitFor((r) => r.verb === "watch");
  await c.untilEvent("relist-done");
  await opened;
  await c.stop();
  const done = c.events.find((x) => x.type === "relist-done") as { resourceVersion: string };
  const q = queryOf(e.sandbox, "watch", 0);
  expect(q.get("watch")).toBe("true");
  expect(q.get("resourceVersion")).toBe(done.resourceVersion);
  expect(q.get("allowWatchBookmarks")).toBe("true");
  const timeout = Number(q.get("timeoutSeconds"));
  expect(timeout).toBeGreaterThanOrEqual(90);
  expect(timeout).toBeLessThanOrEqual(110);
});

test("live changes arrive as added, modified and deleted, and `known` follows them", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const c = new Collector(watcher);
  await c.untilEvent("relist-done");
  const watching = e.sandbox.waitFor((r) => r.verb === "watch");
  await watching;
  const created = await e.client.create(configmaps, "default", cm("live", { a: "1" }));
  await c.untilEvent("added", "live");
  expect(watcher.known.has(created.metadata.uid!)).toBe(true);
  await e.client.patch(configmaps, "default", "live", { data: { a: "2" } });
  await c.untilEvent("modified", "live");
  await e.client.delete(configmaps, "default", "live");
  await c.untilEvent("deleted", "live");
  expect(watcher.known.has(created.metadata.uid!)).toBe(false);
  await c.stop();
  const deleted = c.events.find((x) => x.type === "deleted") as { synthetic?: boolean };
  expect(deleted.synthetic).toBeUndefined();
  expect(watcher.resourceVersion).toBe(e.sandbox.store.resourceVersion());
});

test("BOOKMARKs advance the resourceVersion and are not emitted as events", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const c = new Collector(watcher);
  await c.untilEvent("relist-done");
  const before = watcher.resourceVersion;
  // A change elsewhere moves the server's resourceVersion; only a bookmark can tell us.
  await e.client.create(configmaps, "kube-system", cm("elsewhere", {}, "kube-system"));
  const target = e.sandbox.store.resourceVersion();
  expect(target).not.toBe(before!);
  await eventually(() => watcher.resourceVersion === target, 3000, "a bookmark with the new resourceVersion");
  await c.stop();
  expect(c.events.map((x) => x.type)).toEqual(["relist-start", "relist-done"]);
});

test("a stream ended by the server (timeoutSeconds) is re-watched at once from the last resourceVersion, without backoff", async () => {
  const watcher = new Watcher(e.client, configmaps, {
    namespace: "default",
    streamingList: "never",
    serverTimeoutSeconds: 1,
    backoff: { initialMs: 10_000, maxMs: 10_000, resetAfterMs: 60_000 },
  });
  const c = new Collector(watcher);
  await watchOpen(e.sandbox);
  await e.client.create(configmaps, "default", cm("during"));
  await c.untilEvent("added", "during");
  const rv = watcher.resourceVersion;
  // The re-watch may already have happened while the event was awaited (a loaded machine), so
  // wait on the log's count, not on the next request.
  await eventually(() => e.sandbox.stats.requests("watch") >= 2, 10_000, "a second watch");
  await c.stop();
  const watches = e.sandbox.stats.log.filter((r) => r.verb === "watch");
  // 1 s server timeout + a late timer on a busy machine, far below the 10 s backoff.
  expect(watches[1]!.at - watches[0]!.at).toBeLessThan(5000);
  expect(new URLSearchParams(watches[1]!.query).get("resourceVersion")).toBe(rv!);
  expect(e.sandbox.stats.requests("list")).toBe(1);
}, 15_000);

test("a 1 MB object (near the real server's limits) and multi-byte UTF-8 arrive intact through the stream", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const c = new Collector(watcher);
  await watchOpen(e.sandbox);
  // ~1 MB of UTF-8: a ConfigMap's data may hold 1 MiB; the sandbox, like the real server, refuses more than etcd's 1.5 MiB.
  const blob = "ünïcødé-日本語-🎉".repeat(40_000); // 26 bytes each: 1.04 MB
  await e.client.create(configmaps, "default", cm("big", { blob }));
  await c.untilEvent("added", "big", 0, 10_000);
  await c.stop();
  const added = c.events.find((x) => x.type === "added") as unknown as { object: { data: { blob: string } } };
  expect(added.object.data.blob.length).toBe(blob.length);
  expect(added.object.data.blob === blob).toBe(true);
});
