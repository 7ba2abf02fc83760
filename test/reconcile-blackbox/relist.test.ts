// What a relist of the reconciled resource runs (docs/reconcile.md, "What runs it", start-up):
// after a watch expired (410), an object whose last reconcile succeeded, asked for a requeue or
// threw a PermanentError is not run again, and its requeue stays due when it was; an object whose
// last reconcile failed otherwise is run again at once, in place of its pending retry (the docs
// said "as at its last reconcile", which a failure is not: now they say so). On the kit's virtual
// clock, so that nothing but the relist can run them.

import { expect, test } from "bun:test";
import { PermanentError, Registry } from "kobun";
import { Calls, operate, Widgets } from "./kit.ts";

test("a relist runs again only the object whose last reconcile failed; a requeue stays due", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    const call = calls.record(ctx);
    if (ctx.name === "requeued") return { requeueAfter: 3600 };
    if (ctx.name === "failing" && call === 0) throw new Error("once");
    if (ctx.name === "broken") throw new PermanentError("for good");
  });
  await using kit = await operate(registry, { reconcile: { backoff: { initial: "600s" } } }, { clock: "virtual" });
  for (const name of ["fine", "requeued", "failing", "broken"]) await kit.apply(Widgets, { metadata: { name }, spec: {} });
  await calls.until((c) => c.length >= 4, "each widget's first reconcile");
  await kit.logs.until(/failed permanently: for good/);
  await kit.logs.until(/failed; retrying in 600s: once/); // its retry is pending before the watch expires
  kit.sandbox.faults.expireWatches({ plural: "widgets" });
  await calls.until((c) => calls.of("failing").length >= 2, "the failing widget run by the relist");
  await kit.advance(3599); // the relist, and everything it started, is over; the retry's 600 s have passed too
  expect(calls.all.map((c) => `${c.name} ${c.retry}`).sort())
    .toEqual(["broken 0", "failing 0", "failing 1", "fine 0", "requeued 0"]);
  await kit.advance(1);
  await calls.until((c) => calls.of("requeued").length >= 2, "the requeue an hour on");
}, 60_000);
