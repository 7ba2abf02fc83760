// Streaming lists (sendInitialEvents=true): used when the server supports them; in "auto",
// a rejection is remembered and paged LISTs are used from then on.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { Watcher } from "../../src/watching/watcher.ts";
import { WatchError } from "../../src/watching/errors.ts";
import { Collector, cm, configmaps, env, queryOf, testLogger, type Env, watchOpen } from "./helpers.ts";

let e: Env;
beforeEach(async () => {
  e = await env();
});
afterEach(async () => {
  await e.stop();
});

test("auto: a streaming list replaces the LIST; initial ADDED events are `listed` up to the initial-events-end bookmark", async () => {
  for (const name of ["a", "b"]) await e.client.create(configmaps, "default", cm(name));
  const watcher = new Watcher(e.client, configmaps, { namespace: "default" });
  const c = new Collector(watcher);
  await c.untilEvent("relist-done");
  await e.client.create(configmaps, "default", cm("c"));
  await c.untilEvent("added", "c");
  await c.stop();
  expect(c.events.map((x) => x.type)).toEqual(["relist-start", "listed", "listed", "relist-done", "added"]);
  expect(e.sandbox.stats.requests("list")).toBe(0);
  const q = queryOf(e.sandbox, "watch", 0);
  expect(q.get("sendInitialEvents")).toBe("true");
  expect(q.get("resourceVersionMatch")).toBe("NotOlderThan");
  expect(q.get("allowWatchBookmarks")).toBe("true");
  expect(q.has("resourceVersion")).toBe(false);
  const done = c.events.find((x) => x.type === "relist-done") as { resourceVersion: string };
  expect(Number(done.resourceVersion)).toBeGreaterThan(0);
});

test("auto: after 410 the relist is a streaming list again, with synthetic deletions", async () => {
  for (const name of ["a", "b"]) await e.client.create(configmaps, "default", cm(name));
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", backoff: { initialMs: 5, maxMs: 20, resetAfterMs: 60_000 } });
  const c = new Collector(watcher);
  await c.untilEvent("relist-done");
  e.sandbox.faults.failNext(1_000_000, 503, { verb: "watch", retryAfterSeconds: 0 });
  e.sandbox.faults.dropWatches();
  await e.sandbox.waitFor((r) => r.verb === "watch"); // a failing reconnect: the gap has begun
  await e.client.delete(configmaps, "default", "a");
  e.sandbox.faults.compact();
  e.sandbox.stats.reset();
  await c.until((x) => x.filter((y) => y.type === "relist-done").length === 2);
  await c.stop();
  expect(c.events.some((x) => x.type === "deleted" && x.synthetic && x.object.metadata.name === "a")).toBe(true);
  expect(e.sandbox.stats.requests("list")).toBe(0);
});

test("auto: a 422 rejection of sendInitialEvents falls back to LIST, and the fallback is remembered", async () => {
  await e.client.create(configmaps, "default", cm("a"));
  const { logger, lines } = testLogger();
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", logger });
  e.sandbox.faults.failNext(1, 422, { verb: "watch" });
  const c = new Collector(watcher);
  await c.untilEvent("relist-done");
  await watchOpen(e.sandbox);
  e.sandbox.faults.expireWatches();
  await c.until((x) => x.filter((y) => y.type === "relist-done").length === 2);
  await c.stop();
  expect(c.events.map((x) => x.type).slice(0, 3)).toEqual(["relist-start", "listed", "relist-done"]);
  expect(e.sandbox.stats.requests("list")).toBe(2);
  const watches = e.sandbox.stats.log.filter((r) => r.verb === "watch").map((r) => new URLSearchParams(r.query));
  expect(watches[0]!.get("sendInitialEvents")).toBe("true");
  expect(watches.slice(1).every((q) => !q.has("sendInitialEvents"))).toBe(true);
  expect(lines.filter((l) => l.includes("does not support streaming lists")).length).toBe(1);
});

test("auto: an ERROR before any event falls back to LIST", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default" });
  e.sandbox.faults.failNext(1, 400, { verb: "watch" });
  const c = new Collector(watcher);
  await c.untilEvent("relist-done");
  await c.stop();
  expect(e.sandbox.stats.requests("list")).toBe(1);
});

test("always: a server that rejects streaming lists is a WatchError", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "always" });
  e.sandbox.faults.failNext(1, 422, { verb: "watch" });
  const c = new Collector(watcher);
  await c.done;
  expect(c.error).toBeInstanceOf(WatchError);
  expect(e.sandbox.stats.requests("list")).toBe(0);
});

test("never: no streaming list is attempted", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const c = new Collector(watcher);
  await c.untilEvent("relist-done");
  await e.sandbox.waitFor((r) => r.verb === "watch");
  await c.stop();
  expect(queryOf(e.sandbox, "watch", 0).has("sendInitialEvents")).toBe(false);
  expect(e.sandbox.stats.requests("list")).toBe(1);
});
