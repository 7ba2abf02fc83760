// A requeueAfter or a TemporaryError delay longer than setTimeout's limit (2^31-1 ms, ~24.8 days)
// waits that long: a certificate renewed monthly returns { requeueAfter: 30 days }. setTimeout
// fires such a delay after 1 ms (with a TimeoutOverflowWarning), which ran the object's cycle
// hundreds of times a second: 700 `requeue_after` cycles in one second, and the function itself
// as often under a TemporaryError. Nothing is due here, so the test watches a window of real time.

import { expect, test } from "bun:test";
import { Registry, TemporaryError } from "kobun";
import { Calls, runOperator, Widgets, WIDGETS_PATH } from "./kit.ts";

const CONTROLLER = "widgets.blackbox.kobun.dev";
const MONTH = 30 * 86_400;

test("a requeueAfter or TemporaryError delay of 30 days runs nothing within the next half second", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    calls.record(ctx);
    if (ctx.name === "later") throw new TemporaryError("not before next month", { delay: MONTH });
    return { requeueAfter: MONTH };
  }, { id: "monthly" });
  await using op = await runOperator(registry);
  for (const name of ["monthly", "later"]) {
    await op.post(WIDGETS_PATH, { apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", metadata: { name }, spec: {} });
  }
  await calls.until((c) => c.length >= 2, "each widget's first call");
  await Bun.sleep(500); // a window in which nothing may run: there is no event to await for "nothing"
  const metrics = await op.metrics();
  const total = (result: string) =>
    metrics.get(`controller_runtime_reconcile_total{controller="${CONTROLLER}",result="${result}"}`);
  expect({ calls: calls.all.length, requeueAfter: total("requeue_after"), error: total("error") })
    .toEqual({ calls: 2, requeueAfter: 1, error: 1 });
}, 60_000);
