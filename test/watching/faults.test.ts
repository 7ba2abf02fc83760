// Every other way a watch stream goes wrong: unknown event types, non-410 ERRORs, malformed
// lines, dropped and stalled connections, throttling, server errors and missing permissions.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { Watcher } from "../../src/watching/watcher.ts";
import { WatchError } from "../../src/watching/errors.ts";
import { Collector, cm, configmaps, env, eventually, testLogger, type Env, watchOpen } from "./helpers.ts";

let e: Env;
beforeEach(async () => {
  e = await env();
});
afterEach(async () => {
  await e.stop();
});

const fast = { initialMs: 5, maxMs: 20, resetAfterMs: 60_000 };
const watchRequests = () => e.sandbox.stats.log.filter((r) => r.verb === "watch");

test("seed 002: unknown event types are warned about once per type and skipped; the stream goes on", async () => {
  const { logger, lines } = testLogger();
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never", logger });
  const c = new Collector(watcher);
  await watchOpen(e.sandbox);
  e.sandbox.faults.sendUnknownEvent("FUTURE");
  e.sandbox.faults.sendUnknownEvent("FUTURE");
  e.sandbox.faults.sendUnknownEvent("OTHER");
  await e.client.create(configmaps, "default", cm("after"));
  await c.untilEvent("added", "after");
  await c.stop();
  const warnings = lines.filter((l) => l.includes("unknown watch event type"));
  expect(warnings.length).toBe(2);
  expect(warnings[0]).toContain("type=FUTURE");
  expect(warnings[1]).toContain("type=OTHER");
  expect(c.events.map((x) => x.type)).toEqual(["relist-start", "relist-done", "added"]);
  expect(watchRequests().length).toBe(1);
});

test("seed 002: a non-410 ERROR event throws WatchError with the Status; no socket stays open", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const c = new Collector(watcher);
  await watchOpen(e.sandbox);
  e.sandbox.faults.sendError(500, "InternalError", "etcd is on fire");
  await c.done;
  expect(c.error).toBeInstanceOf(WatchError);
  const error = c.error as WatchError;
  expect(error.code).toBe(500);
  expect(error.status).toMatchObject({ kind: "Status", code: 500, reason: "InternalError", message: "etcd is on fire" });
  expect(error.message).toContain("500");
  expect(error.message).toContain("InternalError");
  expect(error.message).toContain("etcd is on fire");
  await eventually(() => e.sandbox.stats.openWatches() === 0, 1000, "no open watches");
});

test("a malformed line is warned with its length and event type, never its content; the watch resumes from the last resourceVersion", async () => {
  const { logger, lines } = testLogger();
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never", logger, backoff: fast });
  const c = new Collector(watcher);
  await watchOpen(e.sandbox);
  await e.client.create(configmaps, "default", cm("before"));
  await c.untilEvent("added", "before");
  const rv = watcher.resourceVersion;
  const rewatch = e.sandbox.waitFor((r) => r.verb === "watch");
  // A Secret whose base64 data is not quoted: the JSON parser's message would quote it.
  const line = `{"type":"MODIFIED","object":{"kind":"Secret","data":{"password":c2VjcmV0LXBhc3N3b3Jk${"x".repeat(5000)}}}}`;
  e.sandbox.faults.sendMalformedLine(line);
  await rewatch;
  await e.client.create(configmaps, "default", cm("after"));
  await c.untilEvent("added", "after");
  await c.stop();
  expect(c.error).toBeUndefined();
  const warning = lines.find((l) => l.includes("malformed line"))!;
  expect(warning).toBeDefined();
  expect(warning).toContain(`length=${line.length}`);
  expect(warning).toContain("type=MODIFIED");
  expect(warning).toContain('why="invalid JSON: JSON Parse error: Unexpected identifier"');
  for (const logged of lines) {
    expect(logged).not.toContain("c2VjcmV0");
    expect(logged).not.toContain("password");
  }
  expect(new URLSearchParams(watchRequests()[1]!.query).get("resourceVersion")).toBe(rv!);
  expect(e.sandbox.stats.requests("list")).toBe(1);
});

test("an abruptly dropped connection is reconnected from the last resourceVersion, nothing lost", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never", backoff: fast });
  const c = new Collector(watcher);
  await watchOpen(e.sandbox);
  await e.client.create(configmaps, "default", cm("one"));
  await c.untilEvent("added", "one");
  const rv = watcher.resourceVersion;
  const rewatch = e.sandbox.waitFor((r) => r.verb === "watch");
  e.sandbox.faults.dropWatches();
  await rewatch;
  await e.client.create(configmaps, "default", cm("two"));
  await c.untilEvent("added", "two");
  await c.stop();
  expect(new URLSearchParams(watchRequests()[1]!.query).get("resourceVersion")).toBe(rv!);
  expect(e.sandbox.stats.requests("list")).toBe(1);
  expect(c.events.filter((x) => x.type === "added").length).toBe(2);
});

test("a stall longer than inactivityTimeoutMs drops that connection and re-watches from the last resourceVersion", async () => {
  // Bookmarks every 50 ms keep the healthy streams far above a 1 s limit: a loaded machine can
  // pause the process for a few hundred ms, which a tighter limit took for a stall.
  const chatty = await env({ bookmarkIntervalMs: 50 });
  try {
    const { logger, lines } = testLogger();
    const watcher = new Watcher(chatty.client, configmaps, {
      namespace: "default",
      streamingList: "never",
      logger,
      inactivityTimeoutMs: 1000,
      backoff: { initialMs: 10_000, maxMs: 10_000, resetAfterMs: 60_000 },
    });
    const c = new Collector(watcher);
    await watchOpen(chatty.sandbox);
    await c.untilEvent("relist-done");
    await chatty.client.create(configmaps, "default", cm("seen"));
    await c.untilEvent("added", "seen");
    const rv = watcher.resourceVersion;
    const stalledAt = Date.now();
    chatty.sandbox.faults.stallWatches(30_000);
    await chatty.sandbox.waitFor((r) => r.verb === "watch", 4500);
    const elapsed = Date.now() - stalledAt;
    expect(elapsed).toBeGreaterThanOrEqual(900); // the last bookmark came at most 50 ms before the stall
    expect(elapsed).toBeLessThan(4500); // at once, not after the 5-10 s backoff
    await eventually(() => chatty.sandbox.stats.openWatches() === 1, 3000, "the stalled watch to be closed");
    await c.stop();
    const watches = chatty.sandbox.stats.log.filter((r) => r.verb === "watch");
    expect(watches.length).toBe(2);
    expect(new URLSearchParams(watches[1]!.query).get("resourceVersion")).toBe(rv!);
    expect(lines.filter((l) => l.includes("no bytes from the watch stream")).length).toBe(1);
  } finally {
    await chatty.stop();
  }
}, 20_000);

test("bookmarks keep a quiet stream alive: no re-watch while they arrive within inactivityTimeoutMs", async () => {
  const quiet = await env({ bookmarkIntervalMs: 50 });
  try {
    // A 1 s limit, 20 bookmark intervals: a loaded machine's pauses of a few hundred ms must
    // not pass for silence, and without the bookmarks the 2.5 s below would drop the stream twice.
    const watcher = new Watcher(quiet.client, configmaps, { namespace: "default", streamingList: "never", inactivityTimeoutMs: 1000 });
    const c = new Collector(watcher);
    await watchOpen(quiet.sandbox);
    await Bun.sleep(2500); // observing that nothing happens needs time to pass
    await c.stop();
    expect(quiet.sandbox.stats.requests("watch")).toBe(1);
  } finally {
    await quiet.stop();
  }
}, 20_000);

test("429 with Retry-After on the watch waits at least that long before reconnecting", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never", backoff: fast });
  const c = new Collector(watcher);
  await watchOpen(e.sandbox);
  e.sandbox.faults.failNext(1, 429, { verb: "watch", retryAfterSeconds: 1 });
  const throttled = e.sandbox.waitFor((r) => r.verb === "watch");
  e.sandbox.faults.dropWatches();
  await throttled;
  await e.sandbox.waitFor((r) => r.verb === "watch", 3000);
  await c.stop();
  const [, rejected, retried] = watchRequests();
  expect(retried!.at - rejected!.at).toBeGreaterThanOrEqual(950);
  expect(retried!.at - rejected!.at).toBeLessThan(2000);
});

test("5xx on the watch backs off exponentially with jitter, then recovers", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never", backoff: { initialMs: 40, maxMs: 1000, resetAfterMs: 60_000 } });
  const c = new Collector(watcher);
  await watchOpen(e.sandbox);
  e.sandbox.faults.failNext(3, 500, { verb: "watch" });
  e.sandbox.faults.dropWatches();
  for (let i = 0; i < 4; i++) await e.sandbox.waitFor((r) => r.verb === "watch", 3000);
  await e.client.create(configmaps, "default", cm("recovered"));
  await c.untilEvent("added", "recovered");
  await c.stop();
  const at = watchRequests().map((r) => r.at);
  const gaps = [at[2]! - at[1]!, at[3]! - at[2]!, at[4]! - at[3]!];
  // full jitter of 50 %: attempt n waits between base·2ⁿ/2 and base·2ⁿ
  expect(gaps[0]).toBeGreaterThanOrEqual(15);
  expect(gaps[2]).toBeGreaterThanOrEqual(75);
  expect(gaps[2]!).toBeGreaterThan(gaps[0]!);
  expect(e.sandbox.stats.requests("list")).toBe(1);
});

test("403 on LIST throws WatchError naming the resource, the namespace and the missing 'list' verb", async () => {
  e.sandbox.faults.failNext(1, 403, { verb: "list" });
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const c = new Collector(watcher);
  await c.done;
  expect(c.error).toBeInstanceOf(WatchError);
  const message = (c.error as Error).message;
  expect(message).toContain("configmaps");
  expect(message).toContain('"default"');
  expect(message).toContain('"list"');
  expect((c.error as WatchError).code).toBe(403);
});

test("403 on WATCH throws WatchError naming the missing 'watch' verb (cluster-wide)", async () => {
  e.sandbox.faults.failNext(1, 403, { verb: "watch" });
  const watcher = new Watcher(e.client, configmaps, { streamingList: "never" });
  const c = new Collector(watcher);
  await c.done;
  expect(c.error).toBeInstanceOf(WatchError);
  const message = (c.error as Error).message;
  expect(message).toContain("configmaps");
  expect(message).toContain("cluster-wide");
  expect(message).toContain('"watch"');
});
