// Metrics (docs/reconcile.md, "Metrics"), scraped from the operator's /metrics: controller-runtime's
// controller_runtime_reconcile_total{controller,result} by result, _errors_total, _time_seconds,
// _active_workers, _max_concurrent_reconciles, the workqueue_* family, and kobun_handler_runs_total
// with cause="reconcile" per outcome; a change while a call runs is a `requeue` only when kobun's
// write of the object found it (the docs said "a change that came meanwhile", whatever the call
// wrote: a call that writes nothing is a `success`, and the change a cycle of its own). A counter
// has no event to await: the scrape is repeated, bounded, until every reconcile the test saw is counted.

import { expect, test } from "bun:test";
import { PermanentError, Registry, TemporaryError } from "kobun";
import { Calls, runOperator, Widgets, WIDGETS_PATH } from "./kit.ts";

const CONTROLLER = "widgets.blackbox.kobun.dev";

test("reconciles are counted under controller-runtime's names, and calls under kobun_handler_runs_total", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    const first = calls.record(ctx) === 0;
    if (ctx.name === "requeued" && first) return { requeueAfter: 0.05 };
    if (ctx.name === "flaky" && first) throw new Error("once");
    if (ctx.name === "broken") throw new PermanentError("never");
    if (ctx.name === "later" && first) throw new TemporaryError("not yet", { delay: 0.05 });
  }, { id: "metered", finalizer: true }); // kobun's finalizer first: a `requeue` per object
  await using op = await runOperator(registry, { settings: { workers: { limit: 7 } } });
  for (const name of ["fine", "requeued", "flaky", "broken", "later"]) {
    await op.post(WIDGETS_PATH, { apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", metadata: { name }, spec: {} });
  }
  await calls.until((c) => c.length >= 8, "eight calls (fine, requeued twice, flaky twice, broken, later twice)");
  const total = (result: string) => `controller_runtime_reconcile_total{controller="${CONTROLLER}",result="${result}"}`;
  const runs = (outcome: string) =>
    `kobun_handler_runs_total{controller="${CONTROLLER}",handler="metered",cause="reconcile",outcome="${outcome}"}`;
  const active = `controller_runtime_active_workers{controller="${CONTROLLER}"}`;
  let last = new Map<string, number>();
  const results = ["success", "error", "requeue_after", "requeue"];
  const counted = () => results.reduce((n, result) => n + (last.get(total(result)) ?? 0), 0);
  const deadline = performance.now() + 15_000;
  while ((counted() < 13 || last.get(active) !== 0) && performance.now() < deadline) {
    last = await op.metrics();
    if (counted() < 13) await Bun.sleep(20); // no event to wait on: the counters are read again, bounded
  }
  const value = (series: string) => last.get(series) ?? 0;
  expect({
    success: value(total("success")), error: value(total("error")), requeueAfter: value(total("requeue_after")),
    requeue: value(total("requeue")),
  }).toEqual({ success: 4, error: 3, requeueAfter: 1, requeue: 5 }); // a throw of any kind is an `error`
  expect(value(`controller_runtime_reconcile_errors_total{controller="${CONTROLLER}"}`)).toBe(3);
  // Of the three errors, the PermanentError alone is terminal (controller-runtime's TerminalError: not retried).
  expect(value(`controller_runtime_terminal_reconcile_errors_total{controller="${CONTROLLER}"}`)).toBe(1);
  expect(value(`controller_runtime_reconcile_time_seconds_count{controller="${CONTROLLER}"}`)).toBe(13);
  expect(value(`controller_runtime_max_concurrent_reconciles{controller="${CONTROLLER}"}`)).toBe(7);
  expect(last.has(active)).toBe(true);
  expect([...last.keys()].some((s) => s.startsWith("workqueue_adds_total{") && s.includes(CONTROLLER))).toBe(true);
  expect([...last.keys()].some((s) => s.startsWith("workqueue_depth{"))).toBe(true);
  expect({ success: value(runs("success")), retry: value(runs("retry")), failure: value(runs("failure")) })
    .toEqual({ success: 5, retry: 2, failure: 1 });
  expect(value(`kobun_handler_duration_seconds_count{controller="${CONTROLLER}",handler="metered"}`)).toBe(8);
}, 60_000);

test("a change while a call runs: `requeue` if kobun's write of the object found it, else the cycle is a `success`", async () => {
  const calls = new Calls();
  const changed = Promise.withResolvers<void>();
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    if (calls.record(ctx) === 0) await changed.promise; // the spec is changed while the first call of each runs
    if (ctx.name === "writes") ctx.patch.status.ready = true;
  }, { id: "meanwhile" });
  await using op = await runOperator(registry);
  for (const name of ["writes", "quiet"]) {
    await op.post(WIDGETS_PATH, { apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", metadata: { name }, spec: {} });
  }
  await calls.until((c) => c.length >= 2, "the first call of each");
  for (const name of ["writes", "quiet"]) {
    const response = await fetch(`${op.sandbox.url}${WIDGETS_PATH}/${name}`, {
      method: "PATCH", headers: { "content-type": "application/merge-patch+json" }, body: JSON.stringify({ spec: { size: 2 } }),
    });
    expect(response.status).toBe(200);
  }
  changed.resolve();
  await calls.until((c) => c.length >= 4, "the second call of each");
  const total = (result: string) => `controller_runtime_reconcile_total{controller="${CONTROLLER}",result="${result}"}`;
  let last = new Map<string, number>();
  const counted = () => ["success", "requeue"].reduce((n, result) => n + (last.get(total(result)) ?? 0), 0);
  const deadline = performance.now() + 15_000;
  while (counted() < 4 && performance.now() < deadline) {
    last = await op.metrics();
    if (counted() < 4) await Bun.sleep(20); // no event to wait on: the counters are read again, bounded
  }
  expect({ success: last.get(total("success")), requeue: last.get(total("requeue")) }).toEqual({ success: 3, requeue: 1 });
  expect(calls.all.map((c) => `${c.name} ${c.generation}`).sort()).toEqual(["quiet 1", "quiet 2", "writes 1", "writes 2"]);
}, 60_000);
