// A reconcile's `timeout` on the test kit's virtual clock (docs/testing.md, "Virtual time": handler
// and reconcile timeouts run on it; docs/reconcile.md: the call's signal aborts and it counts as a
// failure): kit.advance() brings it, kobun's sleep() wakes with false, the warning names the
// reconcile (once: it said "reconcile reconcile widgets..." for a default id), and the backoff's
// retry comes with the next advance.

import { expect, test } from "bun:test";
import { Registry, sleep } from "kobun";
import { Calls, operate, Widgets } from "./kit.ts";

test("on a virtual clock, kit.advance brings a reconcile's timeout, then its retry after the backoff", async () => {
  const calls = new Calls();
  const slept: boolean[] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    if (calls.record(ctx) === 0) slept.push(await sleep(120, ctx.signal));
  }, { timeout: 60 });
  await using kit = await operate(registry, { reconcile: { backoff: { initial: "10s" } } }, { clock: "virtual" });
  await kit.apply(Widgets, { metadata: { name: "v" }, spec: {} });
  await calls.until((c) => c.length >= 1, "the first call");
  await kit.advance(59);
  expect(slept).toEqual([]);
  await kit.advance(1);
  expect(slept).toEqual([false]);
  await kit.logs.until(
    `retrying in 10s: on.reconcile "reconcile widgets.blackbox.kobun.dev/v1" timed out after 60s`,
  );
  await kit.advance(9);
  expect(calls.all.length).toBe(1);
  await kit.advance(1);
  await calls.until((c) => c.length >= 2, "the retry");
  expect(calls.all[1]!.retry).toBe(1);
}, 60_000);

// A reconcile that keeps returning { requeueAfter: 0 } keeps the operator busy too, but only while no gap between
// its runs outlasts the quiet window (on a loaded machine one may): the message is tested on a call that never ends.
test("kit.advance's still-busy error names both ways to stay busy: a wait that never ends, a requeueAfter: 0 loop", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    calls.record(ctx);
    await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
  });
  await using kit = await operate(registry, undefined, { clock: "virtual", timeout: 500 });
  await kit.apply(Widgets, { metadata: { name: "stuck" }, spec: {} });
  await calls.until((c) => c.length >= 1, "the call that never ends");
  const error = await kit.advance(1).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).toContain("advance: the operator was still busy before advancing after 500 ms");
  expect((error as Error).message).toContain(
    "a handler waiting for something that never comes, or a reconcile that asks again and again to run at once, " +
      "requeueAfter: 0?",
  );
}, 60_000);
