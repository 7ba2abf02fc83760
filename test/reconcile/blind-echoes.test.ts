// The echo rule (docs/reconcile.md, "What wakes a reconcile"): the watch's echo of a child write that a
// reconcile made without reading that resource first wakes no reconcile of its owner (issue 32's bench
// idiom: apply the children, then the status: one reconcile per parent, not two), while a reconcile that
// read the children before writing one (the kubebuilder order) is woken by its echo and converges, and
// another client's change of a child always wakes its owner.

import { afterEach, expect, test } from "bun:test";
import { Registry, type ReconcileContext } from "../../src/declaring/index.ts";
import { CONFIGMAPS, ownedChild, until, WIDGETS, widget, world, type World } from "./fixtures.ts";

let w: (World & { operate: (registry: Registry, file?: object) => Promise<void> }) | undefined;
afterEach(async () => {
  await w?.stop();
  w = undefined;
});

const NAMES = ["p0", "p1", "p2", "p3", "p4"];

/** The bench idiom: write the child blind (apply, then a patch of it), then the status; `seen`: per call. */
function blindly(seen: Map<string, string[]>, readFirst = false) {
  return async (ctx: ReconcileContext): Promise<void> => {
    if (readFirst) await ctx.api.list("configmaps");
    await ctx.api.apply(ownedChild(ctx, { from: ctx.name }), { force: true });
    await ctx.api.patch("configmaps", `${ctx.name}-child`, { metadata: { labels: { step: "2" } } });
    // Read after the writes: what it saw does not make them blind or not.
    const child = ctx.cache.get("configmaps", `${ctx.name}-child`);
    seen.set(ctx.name, [...(seen.get(ctx.name) ?? []), child?.metadata.labels?.edited ?? "ours"]);
    ctx.patch.status.ready = true;
  };
}

async function allReady(): Promise<void> {
  for (const name of NAMES) {
    await until(async () => (await w!.client.get(WIDGETS, "default", name)).status, (s) => s?.ready === true, name);
  }
}

test("a reconcile that writes its child blind runs once per parent; another client's edit of the child wakes it", async () => {
  w = await world();
  const seen = new Map<string, string[]>();
  const registry = new Registry();
  registry.on.reconcile("widgets.test.kobun.dev", blindly(seen), { owns: ["configmaps"] });
  await w.operate(registry);
  for (const name of NAMES) await w.client.create(WIDGETS, "default", widget(name));
  await allReady();
  // The edits come on the children's watch after the writes' echoes: a wake by an echo would run first.
  for (const name of NAMES) {
    await w.client.patch(CONFIGMAPS, "default", `${name}-child`, { metadata: { labels: { edited: "by-kubectl" } } });
  }
  for (const name of NAMES) {
    await until(() => seen.get(name)?.at(-1), (last) => last === "by-kubectl", `${name}'s edit reconciled`);
  }
  for (const name of NAMES) expect(seen.get(name)).toEqual(["ours", "by-kubectl"]);
}, 60_000);

test("the kubebuilder order (status from the cache, then create) is woken by the create's echo and lists the child", async () => {
  w = await world();
  const registry = new Registry();
  registry.on.reconcile("widgets.test.kobun.dev", async (ctx: ReconcileContext) => {
    const children = ctx.cache.list("configmaps")
      .filter((cm) => cm.metadata.ownerReferences?.some((ref) => ref.uid === ctx.uid));
    ctx.patch.status.children = children.map((cm) => cm.metadata.name);
    if (children.length === 0) await ctx.api.create(ownedChild(ctx));
  }, { owns: ["configmaps"] });
  await w.operate(registry);
  for (const name of NAMES) await w.client.create(WIDGETS, "default", widget(name));
  for (const name of NAMES) {
    const status = await until(
      async () => (await w!.client.get(WIDGETS, "default", name)).status,
      (s) => (s?.children as string[] | undefined)?.length === 1, `${name}'s status lists its child`,
    );
    expect(status!.children).toEqual([`${name}-child`]);
  }
}, 60_000);

test("a read of the children through ctx.api before the write makes it not blind: its echo wakes the owner", async () => {
  w = await world();
  const seen = new Map<string, string[]>();
  const registry = new Registry();
  registry.on.reconcile("widgets.test.kobun.dev", blindly(seen, true), { owns: ["configmaps"] });
  await w.operate(registry);
  for (const name of NAMES) await w.client.create(WIDGETS, "default", widget(name));
  for (const name of NAMES) await until(() => seen.get(name)?.length ?? 0, (n) => n >= 2, `${name} woken by its echo`);
}, 60_000);

test("with reconcile.quietEchoes: false, the echo of a blind write wakes its owner, as in controller-runtime", async () => {
  w = await world();
  const seen = new Map<string, string[]>();
  const registry = new Registry();
  registry.on.reconcile("widgets.test.kobun.dev", blindly(seen), { owns: ["configmaps"] });
  await w.operate(registry, { reconcile: { quietEchoes: false } });
  for (const name of NAMES) await w.client.create(WIDGETS, "default", widget(name));
  for (const name of NAMES) await until(() => seen.get(name)?.length ?? 0, (n) => n >= 2, `${name} woken by its echo`);
}, 60_000);

test("with readOwnWrites off the rule is off: a child applied, then read from the cache, is seen by its echo's reconcile", async () => {
  w = await world();
  const registry = new Registry();
  registry.on.reconcile("widgets.test.kobun.dev", async (ctx: ReconcileContext) => {
    await ctx.api.apply(ownedChild(ctx, { a: "1" }), { force: true });
    ctx.patch.status.childSeen = ctx.cache.get("configmaps", `${ctx.name}-child`) ? "yes" : "no";
  }, { owns: ["configmaps"] });
  await w.operate(registry, { reconcile: { readOwnWrites: false } });
  await w.client.create(WIDGETS, "default", widget("p0"));
  const read = async () => (await w!.client.get(WIDGETS, "default", "p0")).status;
  expect((await until(read, (s) => s?.childSeen === "yes", "a status that sees the child"))!.childSeen).toBe("yes");
}, 30_000);

test("a read of ctx.indexes counts as a read of the children: the kubebuilder order through an index converges", async () => {
  w = await world();
  const registry = new Registry();
  registry.on.index("configmaps", ({ body }) => {
    const owner = (body.metadata.ownerReferences as { uid: string }[] | undefined)?.[0]?.uid;
    return owner ? { [owner]: body.metadata.name } : undefined;
  }, { id: "byOwner" });
  registry.on.reconcile("widgets.test.kobun.dev", async (ctx: ReconcileContext) => {
    const mine = ctx.indexes.byOwner!.get(ctx.uid);
    ctx.patch.status.children = mine.length;
    if (mine.length === 0) await ctx.api.create(ownedChild(ctx));
  }, { owns: ["configmaps"] });
  await w.operate(registry);
  await w.client.create(WIDGETS, "default", widget("p0"));
  const read = async () => (await w!.client.get(WIDGETS, "default", "p0")).status;
  expect((await until(read, (s) => s?.children === 1, "a status that counts its child"))!.children).toBe(1);
}, 30_000);
