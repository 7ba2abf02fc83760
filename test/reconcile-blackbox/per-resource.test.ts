// Settings per resource (docs/reconcile.md, "Settings"): `workers.limit` under `resources:` bounds
// the reconciles of that resource at once, while the global limit stays as it is for the others.
// Each reconcile holds its worker until the test lets it go (no timing), and a window in which no
// second reconcile of the limited resource may start. A resource a reconcile owns or watches that
// kobun.yaml disables (`enabled: false`) is named in a warning at start, and ctx.cache's error says
// so, where it said only to name it in owns (where it was).

import { expect, test } from "bun:test";
import { Registry, resource } from "kobun";
import { AtOnce, Calls, operate, Widgets } from "./kit.ts";

test("resources: workers.limit of one resource bounds its reconciles at once; another resource's are not", async () => {
  const calls = new Calls();
  const gates: (() => void)[] = [];
  const atOnce = new AtOnce();
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    atOnce.enter();
    calls.record(ctx);
    await new Promise<void>((resolve) => gates.push(resolve));
    atOnce.leave();
  });
  const configs = new Calls();
  const held: (() => void)[] = [];
  registry.on.reconcile(resource.configmaps, async (ctx) => {
    if (!ctx.name.startsWith("c-")) return;
    configs.record(ctx as never);
    await new Promise<void>((resolve) => held.push(resolve));
  });
  const settings = { resources: { "widgets.blackbox.kobun.dev": { workers: { limit: 1 } } }, workers: { batchWindow: 0 } };
  await using kit = await operate(registry, settings);
  for (const name of ["a", "b", "c"]) await kit.apply(Widgets, { metadata: { name }, spec: {} });
  for (const name of ["c-1", "c-2", "c-3"]) await kit.apply(resource.configmaps, { metadata: { name }, data: {} });
  await configs.until((c) => c.length >= 3, "the three ConfigMaps reconciled at once (the global limit)");
  await calls.until((c) => c.length >= 1, "the first widget");
  await kit.consistently(Widgets, "a", () => calls.all.length === 1, { for: 300 }); // a window for a second to start
  expect(calls.all.length).toBe(1);
  for (let n = 2; n <= 3; n++) {
    gates.shift()!();
    await calls.until((c) => c.length >= n, `widget ${n}, once the one before let go`);
  }
  gates.shift()!();
  for (const release of held) release();
  expect(atOnce.most).toBe(1);
}, 60_000);

test("an owned or watched resource disabled in kobun.yaml: a warning at start names it, and ctx.cache's error says so", async () => {
  const errors: string[] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    try {
      ctx.cache.get(resource.configmaps, "settings");
    } catch (error) {
      errors.push((error as Error).message);
    }
    ctx.patch.status.ready = true;
  }, { id: "widgets", owns: [resource.configmaps], watches: [{ resource: resource.secrets, map: () => null }] });
  await using kit = await operate(registry, { resources: { configmaps: { enabled: false }, secrets: { enabled: false } } });
  await kit.apply(Widgets, { metadata: { name: "w" }, spec: {} });
  await kit.until(Widgets, "w", (w) => w.status?.ready);
  const warned = kit.logs.lines.filter((line) => line.includes("the resource is disabled in kobun.yaml"));
  expect(warned).toEqual([
    expect.stringMatching(/reconcile=widgets resource=configmaps\/v1 key=resources\.configmaps\.enabled/),
    expect.stringMatching(/reconcile=widgets resource=secrets\/v1 key=resources\.secrets\.enabled/),
  ]);
  expect(errors[0]).toContain("kobun.yaml disables it (resources: enabled: false");
}, 60_000);
