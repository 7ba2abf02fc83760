// A reconcile's status patch that would change nothing is not sent (issue 32's bench: every wake of a parent
// wrote its unchanged status). The watch's echo of a child the reconcile created after reading the children
// still wakes its owner: the kubebuilder pattern computes status before it creates, and lists the new child at
// the next reconcile (blind-echoes.test.ts: the echo of a write made without such a read wakes nothing).

import { afterEach, expect, test } from "bun:test";
import { Registry, type ReconcileContext } from "../../src/declaring/index.ts";
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

test("a status patch that changes nothing is not sent; one that changes something is", async () => {
  await editedByAnother("b", []);
  // A label the status reflects: its reconcile runs after the edit's (one object's reconciles never overlap).
  await w!.client.patch(WIDGETS, "default", "b", { metadata: { labels: { color: "red" } } });
  const status = await until(
    async () => (await w!.client.get(WIDGETS, "default", "b")).status, (s) => s?.color === "red", "the color",
  );
  expect(status!.observedGeneration).toBe(1);
  // The create's and the color's; the echo's and the edit's reconciles found the status as they would write
  // it, and wrote nothing.
  expect(statusPatches()).toBe(2);
}, 30_000);

test("a status the reconcile sets back after writing its own object through ctx.api is sent", async () => {
  w = await world();
  const registry = new Registry();
  let runs = 0;
  let working: string | undefined;
  registry.on.reconcile("widgets.test.kobun.dev", async (ctx: ReconcileContext) => {
    runs++;
    if (runs >= 2) {
      // Its own object, written during the call: the body it ran on is older than the object now.
      const answer = await ctx.api.patch(WIDGETS, ctx.name, { status: { phase: "Working" } }, { subresource: "status" });
      working = answer.metadata.resourceVersion;
    }
    ctx.patch.status.phase = "Ready"; // what the body it ran on already said, not what the object says now
  });
  await w.operate(registry);
  await w.client.create(WIDGETS, "default", widget("back"));
  await until(async () => (await w!.client.get(WIDGETS, "default", "back")).status, (s) => s?.phase === "Ready", "ready");
  await w.client.patch(WIDGETS, "default", "back", { metadata: { labels: { poke: "1" } } });
  // The write after "Working" is the reconcile's own patch: without it the object stayed "Working".
  const after = await until(
    async () => w!.client.get(WIDGETS, "default", "back"),
    (o) => working !== undefined && Number(o.metadata.resourceVersion) > Number(working), "a write after Working",
  );
  expect((after.status as { phase?: string }).phase).toBe("Ready");
}, 30_000);
