// A watch that waits for one of the process's connection slots (kube/budget.ts) is not the
// server being silent: its inactivity clock starts when its request is sent, so a starved
// stream is not closed, logged and re-queued at the back every inactivityTimeoutMs.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { streamBudget } from "../../src/kube/budget.ts";
import { Watcher } from "../../src/watching/watcher.ts";
import { Collector, cm, configmaps, env, eventually, testLogger, type Env } from "./helpers.ts";

let e: Env;
beforeEach(async () => {
  e = await env();
});
afterEach(async () => {
  await e.stop();
});

test("a watch waiting for a connection slot longer than inactivityTimeoutMs is not dropped as inactive", async () => {
  // Take every slot but none for the watcher, from the budget itself: held streams of real
  // connections could fail under load and hand the watcher a slot early.
  const holders = Array.from({ length: streamBudget.limit - streamBudget.open }, () => new AbortController());
  for (const h of holders) await streamBudget.acquire(h.signal);
  const { logger, lines } = testLogger();
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never", inactivityTimeoutMs: 100, logger });
  const c = new Collector(watcher);
  try {
    await c.untilEvent("relist-done");
    await eventually(() => streamBudget.waiting === 1, 5000, "the watch to wait for a slot");
    // Three inactivity periods spent in the queue (a wait that cannot be an event: nothing happens).
    await Bun.sleep(300);
    expect(streamBudget.waiting).toBe(1);
    expect(e.sandbox.stats.requests("watch")).toBe(0);
    // Only the lines of the wait tell whether waiting counted as inactivity: once its request
    // is sent, a quiet stream may rightly be dropped (a loaded machine can hold the event below
    // past 100 ms), so what follows the grant is not asserted on.
    expect(lines.filter((l) => l.includes("no bytes from the watch stream"))).toEqual([]);
    holders[0]!.abort();
    await eventually(() => streamBudget.waiting === 0, 5000, "the watch to get the freed slot");
    await e.client.create(configmaps, "default", cm("after-the-wait"));
    await c.untilEvent("added", "after-the-wait");
  } finally {
    await c.stop();
    for (const h of holders) h.abort();
  }
}, 15_000);
