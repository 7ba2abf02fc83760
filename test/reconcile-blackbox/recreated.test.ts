// A reconciled object deleted and made again under its name while the children's watch lags
// (docs/reconcile.md, "What runs it": what it owns). The garbage collector deletes the old
// object's child; the new object's first reconcile, reading a cache that still shows that child,
// takes it for its own (the docs' first example does: it looks the ConfigMap up by name). Before,
// the child's deletion woke nothing (its ownerReference names the old uid), so the new object was
// left without its child until its next change. Now the deletion of an old owner's child wakes the
// object of that name, as controller-runtime's name-based owner mapping does; a change of such a
// child still wakes nothing (owns-watches.test.ts).

import { expect, test } from "bun:test";
import { adopt, Registry, resource, type ReconcileContext, type TargetObject } from "kobun";
import { Calls, operate, Widgets } from "./kit.ts";

test("a widget made again while the children's watch lags gets its ConfigMap once the old one's deletion arrives", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx: ReconcileContext<TargetObject<typeof Widgets>>) => {
    calls.record(ctx);
    const name = `${ctx.name}-config`;
    const data = { size: String(ctx.spec.size) };
    const config = ctx.cache.get(resource.configmaps, name);               // as docs/reconcile.md's widget
    if (!config) await ctx.api.create(adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data }, { owner: ctx.body }));
    else if (config.data?.size !== data.size) await ctx.api.patch(resource.configmaps, name, { data });
    ctx.patch.status.ready = true;
  }, { owns: [resource.configmaps] });
  await using kit = await operate(registry);
  const first = await kit.apply(Widgets, { metadata: { name: "w" }, spec: { size: 1 } });
  await kit.until(resource.configmaps, "w-config", (c) => c.metadata.ownerReferences?.[0]?.uid === first.metadata.uid);
  kit.sandbox.faults.delayWatches(3000, { plural: "configmaps" });
  await kit.delete(Widgets, "w");
  await kit.gone(Widgets, "w");
  const second = await kit.apply(Widgets, { metadata: { name: "w" }, spec: { size: 1 } });
  await kit.until(Widgets, "w", (o) => o.metadata.uid === second.metadata.uid && o.status?.ready);
  const remade = await kit.until(resource.configmaps, "w-config",
    (c) => c.metadata.ownerReferences?.[0]?.uid === second.metadata.uid, { timeout: 20_000 });
  // Unless the machine is so loaded that the new widget's first reconcile came after the lagging deletion (then it
  // made the child at once), it took the old child for its own, and the deletion's wake made this one.
  expect(remade.data).toEqual({ size: "1" });
}, 60_000);
