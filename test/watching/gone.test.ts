// Seed 002: "410 Gone" is a soft restart. Whether it comes as a watch ERROR event, as an
// HTTP 410 when connecting, or on a LIST continue page, the watcher lists afresh (no
// resourceVersion), keeps iterating, and reports what vanished meanwhile as synthetic
// deletions, so the consumer ends with exactly the server's set of objects.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { Watcher } from "../../src/watching/watcher.ts";
import type { WatchClient, WatchEvent } from "../../src/watching/types.ts";
import { Collector, cm, configmaps, env, testLogger, type Env, watchOpen } from "./helpers.ts";

let e: Env;
beforeEach(async () => {
  e = await env();
});
afterEach(async () => {
  await e.stop();
});

const fast = { initialMs: 5, maxMs: 20, resetAfterMs: 60_000 };
const relists = (events: WatchEvent[]) => events.filter((x) => x.type === "relist-done").length;

/** What a consumer believes exists, by replaying the events it got. */
function consumerView(events: WatchEvent[]): string[] {
  const names = new Set<string>();
  for (const x of events) {
    if (x.type === "listed" || x.type === "added" || x.type === "modified") names.add(x.object.metadata.name!);
    if (x.type === "deleted") names.delete(x.object.metadata.name!);
  }
  return [...names].sort();
}
const serverView = () => e.sandbox.store.objects("", "configmaps", "default").map((o) => o.metadata.name as string).sort();

test("seed 002: ERROR 410 mid-stream → fresh LIST without resourceVersion; events() keeps going; one info line", async () => {
  await e.client.create(configmaps, "default", cm("a"));
  const { logger, lines } = testLogger();
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never", logger });
  const c = new Collector(watcher);
  await watchOpen(e.sandbox);
  const relisted = e.sandbox.waitFor((r) => r.verb === "list");
  e.sandbox.faults.expireWatches();
  await relisted;
  await c.until((x) => relists(x) === 2);
  expect(e.sandbox.stats.log.filter((r) => r.verb === "list").every((r) => !new URLSearchParams(r.query).has("resourceVersion"))).toBe(true);
  // Still iterating: a new object arrives after the relist.
  const from = c.events.length;
  await e.client.create(configmaps, "default", cm("b"));
  await c.untilEvent("added", "b", from);
  await c.stop();
  expect(c.error).toBeUndefined();
  expect(c.events.filter((x) => x.type === "listed").map((x) => "object" in x && x.object.metadata.name)).toEqual(["a", "a"]);
  expect(lines.filter((l) => l.includes("410")).length).toBe(1);
  expect(lines.filter((l) => l.includes("410"))[0]).toContain("INFO");
});

test("seed 002: HTTP 410 when (re)connecting the watch → fresh LIST, no error", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never", backoff: fast });
  const c = new Collector(watcher);
  await watchOpen(e.sandbox);
  e.sandbox.faults.failNext(1, 410, { verb: "watch" });
  const relisted = e.sandbox.waitFor((r) => r.verb === "list");
  e.sandbox.faults.dropWatches();
  await relisted;
  await c.until((x) => relists(x) === 2);
  await c.stop();
  expect(c.error).toBeUndefined();
});

test("seed 002: 410 on a LIST continue page → the LIST starts over from the first page", async () => {
  for (let i = 0; i < 5; i++) await e.client.create(configmaps, "default", cm(`cm-${i}`));
  // A real client whose second page request meets an expired continue token.
  let pages = 0;
  const client: WatchClient = {
    list: async (resource, options) => {
      if (++pages === 2) e.sandbox.faults.failNext(1, 410, { verb: "list" });
      return e.client.list(resource, options);
    },
    stream: (path, query, signal) => e.client.stream(path, query, signal),
  };
  const watcher = new Watcher(client, configmaps, { namespace: "default", pageSize: 2, streamingList: "never" });
  const c = new Collector(watcher);
  await c.untilEvent("relist-done");
  await c.stop();
  const lists = e.sandbox.stats.log.filter((r) => r.verb === "list").map((r) => new URLSearchParams(r.query));
  expect(lists.map((q) => q.has("continue"))).toEqual([false, true, false, true, true]);
  expect(c.events.filter((x) => x.type === "relist-start").length).toBe(1);
  expect(consumerView(c.events)).toEqual(serverView());
  expect(c.events.some((x) => x.type === "deleted")).toBe(false);
});

test("seed 002: 410 after compaction, with objects created and deleted in the gap → consumer ends with exactly the server's set", async () => {
  for (const name of ["keep", "gone-1", "gone-2"]) await e.client.create(configmaps, "default", cm(name));
  const { logger, lines } = testLogger();
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never", backoff: fast, logger });
  const c = new Collector(watcher);
  await watchOpen(e.sandbox);
  await c.untilEvent("relist-done");
  // Break the stream and keep it broken while the world changes, then forget the history.
  e.sandbox.faults.failNext(1_000_000, 503, { verb: "watch", retryAfterSeconds: 0 });
  e.sandbox.faults.dropWatches();
  await e.sandbox.waitFor((r) => r.verb === "watch"); // a failing reconnect: the gap has begun
  await e.client.delete(configmaps, "default", "gone-1");
  await e.client.delete(configmaps, "default", "gone-2");
  await e.client.create(configmaps, "default", cm("new-1"));
  await e.client.create(configmaps, "default", cm("new-2"));
  e.sandbox.faults.compact();
  e.sandbox.stats.reset(); // heal: the next reconnect meets the compacted history → 410
  await c.until((x) => relists(x) === 2, 5000, "the relist after 410");
  await c.stop();
  const synthetic = c.events.filter((x) => x.type === "deleted" && x.synthetic).map((x) => "object" in x && x.object.metadata.name);
  expect(synthetic.sort()).toEqual(["gone-1", "gone-2"]);
  expect(consumerView(c.events)).toEqual(serverView());
  expect([...watcher.known.values()].map((o) => o.metadata.name).sort()).toEqual(serverView());
  expect(lines.some((l) => l.includes("410"))).toBe(true);
});

test("a new events() call after a freeze relists and reports deletions made meanwhile as synthetic", async () => {
  for (const name of ["x", "y"]) await e.client.create(configmaps, "default", cm(name));
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const first = new Collector(watcher);
  await first.untilEvent("relist-done");
  await first.stop(); // frozen
  await e.client.delete(configmaps, "default", "x");
  await e.client.create(configmaps, "default", cm("z"));
  const second = new Collector(watcher);
  await second.untilEvent("relist-done");
  await second.stop();
  expect(second.events.map((x) => `${x.type}${"object" in x ? `:${x.object.metadata.name}` : ""}${"synthetic" in x && x.synthetic ? "!" : ""}`)).toEqual([
    "relist-start",
    "listed:y",
    "listed:z",
    "deleted:x!",
    "relist-done",
  ]);
});
