// What a reconcile returns or throws by mistake (docs/reconcile.md, "The function and its context":
// "returns anything else: an error naming what it returned"; docs/handlers.md, "Errors and
// retries"). Shapes a user of another framework writes: controller-runtime's `{ requeue: true }`,
// a Kopf handler's result `{ message }`, a list; and a TemporaryError whose delay is no number of
// seconds ("30s"); a watches map (docs/reconcile.md, "What runs it") that returns a name, or is
// async. Each is an error that names it, retried with the backoff, or for a map logged. Before,
// an object without `requeueAfter` was taken as done, silently, a delay of "30s" retried at once,
// logged as "retrying in NaNs", and a map's string or Promise woke nothing without a word.

import { expect, test } from "bun:test";
import { Registry, resource, TemporaryError, type ObjectKey } from "kobun";
import { Calls, operate, returning, Widgets } from "./kit.ts";

test("a result with keys other than requeueAfter, or a list, is an error naming it, retried", async () => {
  const results: Record<string, unknown> = { requeue: { requeue: true }, message: { message: "ok" }, list: [] };
  const { calls, kit: running } = await returning(results, "shapes");
  await using kit = running;
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

test("a watches map that returns a name or a Promise is logged, naming it (a rejected one too); the keys beside a bad one wake", async () => {
  const calls = new Calls();
  const registry = new Registry();
  const returns: Record<string, (cm: { metadata: { name?: string } }) => unknown> = {
    text: () => "a",
    promise: async () => ({ name: "a" }),
    rejected: async () => {
      throw new Error("no such app"); // an unhandled rejection would end the process
    },
    mixed: () => ["a", { name: "b" }],
  };
  registry.on.reconcile(Widgets, (ctx) => void calls.record(ctx), {
    id: "mapped",
    watches: [{ resource: resource.configmaps, map: (cm) => returns[cm.metadata.name!]?.(cm) as ObjectKey | null }],
  });
  await using kit = await operate(registry);
  for (const name of ["a", "b"]) await kit.apply(Widgets, { metadata: { name }, spec: {} });
  await calls.until((c) => c.length >= 2, "the first runs");
  for (const name of Object.keys(returns)) await kit.apply(resource.configmaps, { metadata: { name }, data: {} });
  await calls.until((c) => calls.of("b").length >= 2, "the wake of b by the mixed list");
  const said = (what: string) => `on.reconcile "mapped": a watches map returned ${what}: return an ObjectKey`;
  await kit.logs.until(said(`["a",{"name":"b"}]`));
  await kit.logs.until(said(`"a"`));
  await kit.logs.until(said("a Promise"));
  expect(String(await kit.logs.until(/a watches map failed/))).toContain("no such app");
  expect([calls.of("a").length, calls.of("b").length]).toEqual([1, 2]);
}, 60_000);
