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
  // Take every slot but none for the watcher.
  const holders = Array.from({ length: streamBudget.limit - streamBudget.open }, () => new AbortController());
  const held = holders.map((c) => e.client.stream("/api/v1/namespaces/default/secrets", { watch: "true" }, c.signal).then((r) => r.body?.getReader(), () => undefined));
  const { logger, lines } = testLogger();
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never", inactivityTimeoutMs: 100, logger });
  const c = new Collector(watcher);
  try {
    await c.untilEvent("relist-done");
    await eventually(() => streamBudget.waiting === 1, 5000, "the watch to wait for a slot");
    // Three inactivity periods spent in the queue (a wait that cannot be an event: nothing happens).
    await Bun.sleep(300);
    expect(streamBudget.waiting).toBe(1);
    holders[0]!.abort();
    await eventually(() => streamBudget.waiting === 0, 5000, "the watch to get the freed slot");
    await e.client.create(configmaps, "default", cm("after-the-wait"));
    await c.untilEvent("added", "after-the-wait");
  } finally {
    await c.stop();
    for (const h of holders) h.abort();
    await Promise.all(held);
  }
  expect(lines.filter((l) => /no bytes for/.test(l))).toEqual([]);
  expect(e.sandbox.stats.log.filter((r) => r.verb === "watch" && r.path.includes("configmaps")).length).toBe(1);
});
