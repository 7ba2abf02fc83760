// A reconcile beside the other handlers of its resource (docs/reconcile.md, "Reconcile, or
// handlers by cause?"): on.event runs in the same cycle, before the reconcile; an on.index of the
// resource is updated before any handler of the event runs.

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { Calls, operate, Widgets } from "./kit.ts";

test("on.event runs before the reconcile of the same change; an index is updated before both", async () => {
  const order: string[] = [];
  const calls = new Calls();
  const registry = new Registry();
  registry.on.index(Widgets, function byColor(ctx) {
    return ctx.labels.color ? { [ctx.labels.color]: true } : undefined;
  });
  registry.on.event(Widgets, (ctx) => void order.push(`event ${ctx.name} ${ctx.labels.color ?? "-"}`));
  registry.on.reconcile(Widgets, (ctx) => {
    const same = ctx.cache.list(Widgets, { index: { id: "byColor", key: ctx.labels.color ?? "" } });
    order.push(`reconcile ${ctx.name} ${ctx.labels.color ?? "-"} sees ${same.map((w) => w.metadata.name).join(",")}`);
    calls.record(ctx);
  });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "r", labels: { color: "red" } }, spec: {} });
  await calls.until((c) => c.length >= 1, "the reconcile");
  expect(order).toEqual(["event r red", "reconcile r red sees r"]);
}, 60_000);
