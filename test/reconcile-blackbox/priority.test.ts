// The priority queue (docs/reconcile.md, "The queue"): an object created while the start-up's
// objects drain waits for a free worker, not for them all; with `workers.priority: false` it waits
// its turn behind them (first come, first served), which shows the test can tell the two apart.

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { Calls, runOperator, Widgets, WIDGETS_PATH } from "./kit.ts";

const FOUND = 120;
const widget = (name: string) => ({ apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", metadata: { name }, spec: {} });

/** Where, among all calls, the widget created during the start-up's first reconcile ran. */
async function placeOfNews(priority: boolean): Promise<number> {
  const calls = new Calls();
  let post: ((path: string, body: object) => Promise<unknown>) | undefined;
  let created: Promise<unknown> | undefined;
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    calls.record(ctx);
    created ??= post!(WIDGETS_PATH, widget("news")); // made once the drain has begun
    await Bun.sleep(5); // the work of a reconcile (not a wait for anything)
  });
  await using op = await runOperator(registry, {
    settings: { workers: { limit: 2, priority } },
    before: async (poster) => {
      post = poster;
      for (let i = 0; i < FOUND; i++) await poster(WIDGETS_PATH, widget(`found-${i}`));
    },
  });
  await calls.until((c) => c.length >= FOUND + 1, "every widget's reconcile", 30_000);
  await created;
  void op;
  return calls.all.findIndex((c) => c.name === "news");
}

test("news is reconciled before the start-up's objects; without priority, after them", async () => {
  const withPriority = await placeOfNews(true);
  const firstComeFirstServed = await placeOfNews(false);
  expect(withPriority).toBeLessThan(FOUND / 4);
  expect(firstComeFirstServed).toBeGreaterThan(FOUND / 2);
}, 90_000);
