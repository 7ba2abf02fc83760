// Soak: many freeze/resume cycles of a busy watch stream must keep memory flat. Older Bun
// leaked on every aborted streaming fetch (oven-sh/bun#32659); kobun freezes by aborting
// streams (seed 000), so a regression there would grow an operator without bound. Each cycle
// runs the operator's own loop shape: wait until running, watch with a signal the freeze
// toggle aborts, relist on resume, while another client keeps the stream busy.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { linkedSignal } from "../../src/util/abort.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { Watcher } from "../../src/watching/watcher.ts";
import { cm, configmaps, env, eventually, type Env } from "./helpers.ts";

const OBJECTS = 200;
const WARM_UP = 100;
const CYCLES = 3000;

let e: Env;
beforeAll(async () => {
  e = await env({ historySize: 2000, bookmarkIntervalMs: 60_000 });
  for (let i = 0; i < OBJECTS; i += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, j) => e.client.create(configmaps, "default", cm(`soak-${i + j}`, { n: "0" }))));
  }
  // Fill the sandbox's bounded history first, so that what it keeps does not grow while we measure: its
  // paged lists' snapshots reach back 10,000 events (and 500 more before a drop), past the 2,000 watchable.
  for (let i = 0; i < 10_500; i += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, j) => e.client.patch(configmaps, "default", `soak-${j}`, { data: { n: `fill-${i + j}` } })));
  }
}, 60_000);
afterAll(() => e.stop());

function rssMB(): number {
  Bun.gc(true);
  return process.memoryUsage.rss() / 1048576;
}

test(`${CYCLES} freeze/resume cycles of a busy stream keep RSS flat`, async () => {
  const toggle = new Toggle();
  const stop = new AbortController();
  const watcher = new Watcher(e.client, configmaps, { namespace: "default" });
  let relists = 0;
  let wake = () => {};
  const loop = (async () => {
    while (!stop.signal.aborted) {
      if (!(await toggle.waitRunning(stop.signal))) return;
      const link = linkedSignal(stop.signal, toggle.runningSignal);
      try {
        for await (const event of watcher.events(link.signal)) {
          if (event.type === "relist-done") {
            relists++;
            wake();
          }
        }
      } finally {
        link.dispose();
      }
    }
  })();
  // Keep the stream busy: a steady trickle of changes to one object.
  let writes = 0;
  const busy = (async () => {
    while (!stop.signal.aborted) {
      await e.client.patch(configmaps, "default", "soak-0", { data: { n: String(++writes) } }).catch(() => {});
    }
  })();
  const cycle = async () => {
    const target = relists + 1;
    const relisted = new Promise<void>((resolve) => (wake = () => relists >= target && resolve()));
    toggle.unfreeze("soak");
    await relisted;
    toggle.freeze("soak");
  };
  toggle.freeze("soak");
  for (let i = 0; i < WARM_UP; i++) await cycle();
  e.sandbox.stats.reset();
  // RSS is the whole test process, sandbox included: the first third of the cycles lets its
  // bounded history and the heap settle; a leak per aborted stream grows with the cycles after.
  const settled = Math.floor(CYCLES / 3);
  let before = 0;
  const started = performance.now();
  for (let i = 0; i < CYCLES; i++) {
    await cycle();
    if (i % 100 === 0) e.sandbox.stats.reset(); // the sandbox's request log is not ours to measure
    if (i === settled) before = rssMB();
  }
  const after = rssMB();
  stop.abort();
  await Promise.all([loop, busy]);
  console.log(`soak: ${CYCLES} cycles (RSS from cycle ${settled}) in ${Math.round(performance.now() - started)} ms, ${writes} writes; RSS ${before.toFixed(1)} → ${after.toFixed(1)} MB`);
  expect(relists).toBe(WARM_UP + CYCLES);
  expect(after - before).toBeLessThan(20);
  // The server notices the last closed connection a moment later.
  await eventually(() => e.sandbox.stats.openWatches() === 0);
}, 60_000);
