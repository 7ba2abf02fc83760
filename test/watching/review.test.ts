// Review findings: a 410 answered again right after a fresh LIST must not loop LISTs without
// a pause; and once the consumer's signal aborts (a freeze), no further event is yielded.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { Watcher } from "../../src/watching/watcher.ts";
import type { WatchEvent } from "../../src/watching/types.ts";
import { cm, configmaps, env, watchOpen, type Env } from "./helpers.ts";

let e: Env;
beforeEach(async () => {
  e = await env();
});
afterEach(async () => {
  await e.stop();
});

test("a watch that answers 410 again and again after each fresh LIST backs off instead of relisting in a tight loop", async () => {
  await e.client.create(configmaps, "default", cm("a"));
  const watcher = new Watcher(e.client, configmaps, {
    namespace: "default",
    streamingList: "never",
    backoff: { initialMs: 200, maxMs: 1000, resetAfterMs: 60_000 },
  });
  e.sandbox.faults.failNext(50, 410, { verb: "watch" });
  const controller = new AbortController();
  const done = (async () => {
    for await (const _ of watcher.events(controller.signal)) void _;
  })();
  // The first 410 relists at once (seed 002); a second 410 right after that LIST is no news.
  await e.sandbox.waitFor((r) => r.verb === "list" && e.sandbox.stats.log.filter((x) => x.verb === "list").length >= 2);
  await Bun.sleep(300); // the absence of a storm can only be observed over time
  const lists = e.sandbox.stats.log.filter((r) => r.verb === "list").length;
  controller.abort();
  await done;
  expect(lists).toBeLessThanOrEqual(5);
});

test("a streaming-list watch answered 410 again and again backs off too", async () => {
  const watcher = new Watcher(e.client, configmaps, {
    namespace: "default",
    streamingList: "always",
    backoff: { initialMs: 200, maxMs: 1000, resetAfterMs: 60_000 },
  });
  e.sandbox.faults.failNext(50, 410, { verb: "watch" });
  const controller = new AbortController();
  const done = (async () => {
    try {
      for await (const _ of watcher.events(controller.signal)) void _;
    } catch {
      // a WatchError is fine here; a storm is not
    }
  })();
  await e.sandbox.waitFor((r) => r.verb === "watch");
  await Bun.sleep(300);
  const watches = e.sandbox.stats.log.filter((r) => r.verb === "watch").length;
  controller.abort();
  await done;
  expect(watches).toBeLessThanOrEqual(5);
});

test("no event is yielded after the consumer's signal aborts, even from the rest of a LIST page", async () => {
  for (const name of ["a", "b", "c", "d", "e"]) await e.client.create(configmaps, "default", cm(name));
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const controller = new AbortController();
  const after: WatchEvent[] = [];
  for await (const event of watcher.events(controller.signal)) {
    if (controller.signal.aborted) after.push(event);
    else if (event.type === "listed") controller.abort(); // a freeze, decided while handling this event
  }
  expect(after.map((x) => x.type)).toEqual([]);
});

test("no event is yielded after the consumer's signal aborts, even from the rest of a watch chunk", async () => {
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const controller = new AbortController();
  const after: WatchEvent[] = [];
  const done = (async () => {
    for await (const event of watcher.events(controller.signal)) {
      if (controller.signal.aborted) after.push(event);
      else if (event.type === "added") controller.abort();
    }
  })();
  await watchOpen(e.sandbox);
  e.sandbox.faults.stallWatches(100); // queue the events, so they go out in one chunk
  for (const name of ["a", "b", "c", "d", "e"]) await e.client.create(configmaps, "default", cm(name));
  await done;
  expect(after.map((x) => x.type)).toEqual([]);
});
