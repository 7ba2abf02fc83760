// ctx.cache.list's labelSelector (docs/reconcile.md, "The cache") read as the API server reads a
// LIST's: for each selector, the names the cache lists are the names the sandbox's LIST answers,
// equality, set-based, existence and apimachinery's integer comparisons (`replicas>2`) alike; one
// the server refuses is an error, never an empty list.

import { expect, test } from "bun:test";
import { Registry, resource } from "kobun";
import { Calls, operate, Widgets } from "./kit.ts";

const SELECTORS = [
  "tier in (web,api)", "tier notin (web)", "!legacy", "tier=web,env!=prod", "replicas>2", "replicas<3",
  "replicas > 2,tier", "replicas<1",
];

test("ctx.cache.list selects what a LIST with the same labelSelector answers, > and < included", async () => {
  const calls = new Calls();
  const cached: Record<string, string[]> = {};
  const cms = resource.configmaps;
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    for (const s of SELECTORS) cached[s] = ctx.cache.list(cms, { labelSelector: `test=sel,${s}` }).map((c) => c.metadata.name!).sort();
    calls.record(ctx);
  }, { watches: [{ resource: cms, map: () => null }] });
  await using kit = await operate(registry);
  const labels = {
    a: { tier: "web", env: "prod", replicas: "1" }, b: { tier: "api", legacy: "y", replicas: "3" },
    c: { tier: "web", replicas: "x3" }, d: { replicas: "0" }, e: {}, f: { replicas: "99999999999999999999" },
  };
  for (const [name, to] of Object.entries(labels)) await kit.apply(cms, { metadata: { name, labels: { test: "sel", ...to } } });
  await kit.apply(Widgets, { metadata: { name: "sel" }, spec: {} });
  await calls.until((c) => c.length >= 1, "the run");
  const listed: Record<string, string[]> = {};
  for (const s of SELECTORS) listed[s] = (await kit.list(cms, { labelSelector: `test=sel,${s}` })).map((c) => c.metadata.name!).sort();
  expect(listed["replicas>2"]).toEqual(["b"]); // the server does compare: the test is not vacuous
  expect(cached).toEqual(listed);
}, 60_000);

test("a > or < against what is not an integer is an error naming it, as the server refuses it", async () => {
  const errors: string[] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    try {
      ctx.cache.list(resource.configmaps, { labelSelector: "replicas>two" });
    } catch (error) {
      errors.push(String(error));
    }
    ctx.patch.status.ready = true;
  }, { watches: [{ resource: resource.configmaps, map: () => null }] });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "bad" }, spec: {} });
  await kit.until(Widgets, "bad", (w) => w.status?.ready);
  expect(errors).toEqual([expect.stringContaining('"two" after ">" is not an integer')]);
  await expect(kit.list(resource.configmaps, { labelSelector: "replicas>two" })).rejects.toThrow(/integer/);
}, 60_000);
