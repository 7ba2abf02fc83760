// What a reconcile returns or throws by mistake (docs/reconcile.md, "The function and its context":
// "returns anything else: an error naming what it returned"; docs/handlers.md, "Errors and
// retries"). Shapes a user of another framework writes: controller-runtime's `{ requeue: true }`,
// a Kopf handler's result `{ message }`, a list; and a TemporaryError whose delay is no number of
// seconds ("30s"). Each is an error that names it, retried with the backoff. Before, an object
// without `requeueAfter` was taken as done, silently, and a delay of "30s" retried at once,
// logged as "retrying in NaNs".

import { expect, test } from "bun:test";
import { Registry, TemporaryError, type ReconcileResult } from "kobun";
import { Calls, operate, Widgets } from "./kit.ts";

test("a result with keys other than requeueAfter, or a list, is an error naming it, retried", async () => {
  const calls = new Calls();
  const results: Record<string, unknown> = { requeue: { requeue: true }, message: { message: "ok" }, list: [] };
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    if (calls.record(ctx) === 0) return results[ctx.name] as ReconcileResult;
  }, { id: "shapes" });
  await using kit = await operate(registry, { reconcile: { backoff: { initial: "10ms" } } });
  for (const name of Object.keys(results)) await kit.apply(Widgets, { metadata: { name }, spec: {} });
  await calls.until((c) => Object.keys(results).every((name) => c.filter((x) => x.name === name).length >= 2),
    "a retry of each");
  for (const name of Object.keys(results)) expect(calls.of(name)[1]!.retry).toBe(1);
  const said = /failed; retrying in \S+: on\.reconcile "shapes" returned (.*?): return nothing \(done\) or \{ requeueAfter: seconds \}/;
  await kit.logs.until(/returned \[\]/);
  const shown = kit.logs.lines.map((line) => said.exec(line)?.[1]).filter(Boolean).sort();
  expect(shown).toEqual(["[]", `{"message":"ok"}`, `{"requeue":true}`]);
}, 60_000);

test("a TemporaryError with a delay that is not a number of seconds is refused, naming it; the backoff retries", async () => {
  expect(() => new TemporaryError("later", { delay: "30s" as unknown as number })).toThrow(
    `TemporaryError "later": delay must be a finite number of seconds, not "30s"`,
  );
  expect(() => new TemporaryError("later", { delay: NaN })).toThrow("not NaN");
  expect(new TemporaryError("later", { delay: 0 }).delay).toBe(0);
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    if (calls.record(ctx) === 0) throw new TemporaryError("later", { delay: Number("30s") });
  });
  await using kit = await operate(registry, { reconcile: { backoff: { initial: "150ms" } } });
  await kit.apply(Widgets, { metadata: { name: "t" }, spec: {} });
  await calls.until((c) => c.length >= 2, "the retry");
  expect((calls.all[1]!.at - calls.all[0]!.at) / 1000).toBeGreaterThanOrEqual(0.14); // the backoff, not at once
  await kit.logs.until(/retrying in 150ms: TemporaryError "later": delay must be a finite number of seconds, not NaN/);
}, 60_000);
