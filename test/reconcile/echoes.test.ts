// on.reconcile does not wake itself (issue 32's bench: ~2.2 reconciles and ~9 requests per parent where one
// reconcile does): the watch's echo of a child it created wakes no one, while a change someone else makes to
// that child still does, and so does our write of an object another reconcile watches; a status patch that
// would change nothing is not sent.

import { afterEach, expect, test } from "bun:test";
import { Registry, type ReconcileContext } from "../../src/declaring/index.ts";
import type { KubeObject } from "../../src/kube/index.ts";
import { CONFIGMAPS, ownedChild, until, WIDGETS, widget, world, type World } from "./fixtures.ts";

let w: (World & { operate: (registry: Registry, file?: object) => Promise<void> }) | undefined;
afterEach(async () => {
  await w?.stop();
  w = undefined;
});

/** Creates the widget's ConfigMap when the cache shows none; the status says ready and the widget's color. */
function reconcileRecording(seen: string[]) {
  return async (ctx: ReconcileContext): Promise<void> => {
    const child = ctx.cache.get("configmaps", `${ctx.name}-child`);
    seen.push(child ? `child:${child.metadata.labels?.edited ?? "ours"}` : "no child");
    if (!child) {
      await ctx.api.create(ownedChild(ctx));
    }
    ctx.patch.status.ready = true;
    ctx.patch.status.color = ctx.labels.color ?? "none";
  };
}

/** The operator's status patches of widgets, as the sandbox saw them. */
function statusPatches(): number {
  return w!.sandbox.stats.log.filter((r) => r.verb === "patch" && r.plural === "widgets" && r.path.endsWith("/status"))
    .length;
}

/** An operator reconciling widgets that own their ConfigMap; widget `name` made, ready, and its child edited. */
async function editedByAnother(name: string, seen: string[]): Promise<void> {
  w = await world();
  const registry = new Registry();
  registry.on.reconcile("widgets.test.kobun.dev", reconcileRecording(seen), { owns: ["configmaps"] });
  await w.operate(registry);
  await w.client.create(WIDGETS, "default", widget(name));
  await until(async () => (await w!.client.get(WIDGETS, "default", name)).status, (s) => s?.ready === true, "ready");
  // Someone else edits the child: a change the reconcile did not make, on the same watch after the create's echo.
  await w.client.patch(CONFIGMAPS, "default", `${name}-child`, { metadata: { labels: { edited: "by-kubectl" } } });
  await until(() => seen.at(-1), (last) => last === "child:by-kubectl", "the edit's reconcile");
}

test("the echo of its own child's create wakes nothing; another client's edit of the child wakes the owner", async () => {
  const seen: string[] = [];
  await editedByAnother("a", seen);
  // Without the echo rule, the create's echo ran it once more between these, seeing the child as it made it.
  expect(seen).toEqual(["no child", "child:by-kubectl"]);
}, 30_000);

test("a status patch that changes nothing is not sent; one that changes something is", async () => {
  await editedByAnother("b", []);
  // A label the status reflects: its reconcile runs after the edit's (one object's reconciles never overlap).
  await w!.client.patch(WIDGETS, "default", "b", { metadata: { labels: { color: "red" } } });
  const status = await until(
    async () => (await w!.client.get(WIDGETS, "default", "b")).status, (s) => s?.color === "red", "the color",
  );
  expect(status!.observedGeneration).toBe(1);
  // The create's and the color's; the edit's reconcile found the status as it would write it, and wrote nothing.
  expect(statusPatches()).toBe(2);
}, 30_000);

test("our own write of a watched object still wakes the reconcile it maps to: it was another object's write", async () => {
  w = await world();
  const seen: string[] = [];
  const registry = new Registry();
  registry.on.reconcile("widgets.test.kobun.dev", async (ctx) => {
    seen.push(ctx.name);
    const to = (ctx.spec as { notes?: string }).notes;
    if (to && !ctx.cache.get("configmaps", `note-to-${to}`)) {
      await ctx.api.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `note-to-${to}`, labels: { widget: to } } });
    }
  }, { watches: [{ resource: "configmaps", map: (cm: KubeObject) => (cm.metadata.labels?.widget ? { name: cm.metadata.labels.widget } : null) }] });
  await w.operate(registry);
  await w.client.create(WIDGETS, "default", widget("q"));
  await until(() => seen.length, (n) => n === 1, "q's first reconcile");
  await w.client.create(WIDGETS, "default", widget("p", { notes: "q" }));
  await until(() => seen.filter((name) => name === "q").length, (n) => n === 2, "q woken by p's note");
  expect(seen).toEqual(["q", "p", "q"]);
}, 30_000);
