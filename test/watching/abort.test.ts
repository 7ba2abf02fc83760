// Seeds 000/001 (freeze, shutdown): aborting the signal closes the socket at once, even
// while the stream is idle; the iterator ends quietly; nothing is left open, also when the
// consumer simply breaks out of `for await`.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { Watcher } from "../../src/watching/watcher.ts";
import { Collector, cm, configmaps, env, eventually, testLogger, type Env, watchOpen } from "./helpers.ts";

let e: Env;
beforeEach(async () => {
  e = await env({ bookmarkIntervalMs: 60_000 }); // truly idle streams
});
afterEach(async () => {
  await e.stop();
});

test("aborting an idle watch ends the iterator at once (not at its next event, a minute away) and leaves no open watch", async () => {
  for (const streamingList of ["never", "auto"] as const) {
    const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList });
    const c = new Collector(watcher);
    await c.untilEvent("relist-done");
    await eventually(() => e.sandbox.stats.openWatches() === 1, 1000, "the watch to be open");
    const started = performance.now();
    await c.stop();
    const elapsed = performance.now() - started;
    // Alone it takes a few ms; the bound holds on a loaded machine and is still far from the 60 s bookmark.
    expect(elapsed).toBeLessThan(1_000);
    expect(c.error).toBeUndefined();
    await eventually(() => e.sandbox.stats.openWatches() === 0, 1000, "the server to see the socket closed");
  }
});

test("breaking out of `for await` closes the connection (return() cleanup)", async () => {
  await e.client.create(configmaps, "default", cm("a"));
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const signal = new AbortController().signal; // never aborted: only the break ends it
  const opened = e.sandbox.waitFor((r) => r.verb === "watch");
  const consumer = (async () => {
    for await (const event of watcher.events(signal)) {
      if (event.type === "added") break;
    }
  })();
  await opened;
  await eventually(() => e.sandbox.stats.openWatches() === 1, 1000, "the watch to be open");
  await e.client.create(configmaps, "default", cm("b"));
  await consumer;
  await eventually(() => e.sandbox.stats.openWatches() === 0, 1000, "the server to see the socket closed");
  expect(e.sandbox.stats.requests("watch")).toBe(1);
});

test("aborting during a reconnect backoff ends at once (no timer waits it out)", async () => {
  const { logger, lines } = testLogger();
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never", logger, backoff: { initialMs: 30_000, maxMs: 30_000, resetAfterMs: 60_000 } });
  const c = new Collector(watcher);
  await watchOpen(e.sandbox);
  e.sandbox.faults.dropWatches();
  await eventually(() => lines.some((l) => l.includes("watch failed; retrying")), 1000, "the watcher to enter its 15–30 s backoff");
  const started = performance.now();
  await c.stop();
  expect(performance.now() - started).toBeLessThan(1_000); // the backoff is 15–30 s; a loaded machine's pause is not

  expect(e.sandbox.stats.requests("watch")).toBe(1);
});

test("one connection per watcher: several watchers never hold more watch sockets than there are watchers", async () => {
  const collectors = ["default", "kube-system", "default"].map(
    (namespace) => new Collector(new Watcher(e.client, configmaps, { namespace, streamingList: "never", backoff: { initialMs: 5, maxMs: 20, resetAfterMs: 60_000 } })),
  );
  await Promise.all(collectors.map((c) => c.untilEvent("relist-done")));
  await eventually(() => e.sandbox.stats.openWatches() === 3, 1000, "three watches");
  for (let i = 0; i < 3; i++) {
    const back = e.sandbox.waitFor((r) => r.verb === "watch");
    e.sandbox.faults.dropWatches();
    await back;
    expect(e.sandbox.stats.openWatches()).toBeLessThanOrEqual(3);
  }
  await eventually(() => e.sandbox.stats.openWatches() === 3, 1000, "three watches again");
  await Promise.all(collectors.map((c) => c.stop()));
  await eventually(() => e.sandbox.stats.openWatches() === 0, 1000, "no watches");
});

test("a second concurrent events() on the same watcher is refused", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const first = new Collector(watcher);
  await first.untilEvent("relist-done");
  const second = new Collector(watcher);
  await second.done;
  expect(String(second.error)).toContain("already has a consumer");
  await first.stop();
});
