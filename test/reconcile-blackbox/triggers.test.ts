// What runs a reconcile (docs/reconcile.md, "What runs it"), seen from outside: by default a new
// generation, labels, annotations and finalizers, never a status change (its own or anyone's);
// with `on: "any"` every new version (and objects without a generation under either); at start-up
// every existing object once, its owned children already in the cache, and a relist does not run
// them again.

import { expect, test } from "bun:test";
import { adopt, Registry, resource } from "kobun";
import { Calls, operate, runOperator, Widgets, WIDGETS_PATH } from "./kit.ts";

const QUICK = { workers: { batchWindow: 0 } };

test("by default: generation, labels, annotations and finalizers run it; status changes do not", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    calls.record(ctx);
    ctx.patch.status.ready = true; // its own status write: must not run it again
  });
  await using kit = await operate(registry, QUICK);
  await kit.apply(Widgets, { metadata: { name: "w" }, spec: { size: 1 } });
  await kit.until(Widgets, "w", (o) => o.status?.ready);
  await kit.patchStatus(Widgets, "w", { children: 7 }); // someone else's status write: nothing
  await kit.apply(Widgets, { metadata: { name: "w", labels: { color: "red" } }, spec: { size: 1 } });
  await calls.until((c) => c.some((x) => x.labels.color === "red"), "the label's reconcile");
  await kit.apply(Widgets, { metadata: { name: "w", labels: { color: "red" }, annotations: { a: "1" } }, spec: { size: 1 } });
  await calls.until((c) => c.length >= 3, "the annotation's reconcile");
  await kit.apply(Widgets, {
    metadata: { name: "w", labels: { color: "red" }, annotations: { a: "1" }, finalizers: ["test.kobun.dev/hold"] },
    spec: { size: 1 },
  });
  await calls.until((c) => c.length >= 4, "the finalizer's reconcile");
  await kit.apply(Widgets, {
    metadata: { name: "w", labels: { color: "red" }, annotations: { a: "1" }, finalizers: ["test.kobun.dev/hold"] },
    spec: { size: 2 },
  });
  await calls.until((c) => c.some((x) => x.generation === 2), "the new generation's reconcile");
  // Five triggers, five calls: neither status write (its own, the test's) ran it.
  expect(calls.all.length).toBe(5);
  expect(calls.all.map((c) => c.generation)).toEqual([1, 1, 1, 1, 2]);
}, 60_000);

test("on: \"any\" runs it for a status change too, its own once, then it settles", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    calls.record(ctx);
    ctx.patch.status.ready = true;
  }, { on: "any" });
  await using kit = await operate(registry, QUICK);
  await kit.apply(Widgets, { metadata: { name: "w" }, spec: { size: 1 } });
  const ready = await kit.until(Widgets, "w", (o) => o.status?.ready);
  await calls.until((c) => c.some((x) => x.resourceVersion === ready.metadata.resourceVersion), "the run on its own write");
  await kit.consistently(Widgets, "w", (o) => o?.metadata.resourceVersion === ready.metadata.resourceVersion, { for: 300 });
  expect(calls.all.length).toBe(2);
  const patched = await kit.patchStatus(Widgets, "w", { children: 1 });
  await calls.until((c) => c.some((x) => x.resourceVersion === patched.metadata.resourceVersion), "the status change's run");
}, 60_000);

test("objects without a generation (ConfigMaps) are run by every new version, by default too", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(resource.configmaps, (ctx) => void calls.record(ctx));
  await using kit = await operate(registry, QUICK);
  await kit.apply(resource.configmaps, { metadata: { name: "c" }, data: { a: "1" } });
  await calls.until((c) => c.length >= 1, "the first run");
  const changed = await kit.apply(resource.configmaps, { metadata: { name: "c" }, data: { a: "2" } });
  expect(changed.metadata.generation).toBeUndefined(); // as on kube-apiserver: the version is all that changes
  await calls.until((c) => c.some((x) => x.resourceVersion === changed.metadata.resourceVersion), "the data change's run");
}, 60_000);

test("start-up reconciles each existing object once, owned children already cached; a relist runs none again", async () => {
  const calls = new Calls();
  const childSeen = new Map<string, boolean>();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    childSeen.set(ctx.name, ctx.cache.get(resource.configmaps, `${ctx.name}-child`) !== undefined);
    calls.record(ctx);
  }, { owns: [resource.configmaps] });
  const widget = (name: string) => ({ apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", metadata: { name }, spec: {} });
  await using op = await runOperator(registry, {
    settings: { watching: { backoff: { initial: "50ms" } } },
    before: async (post, sandbox) => {
      // The children's first listings fail (a LIST, or a watch that streams the list first): no
      // reconcile may run before one succeeds.
      for (const verb of ["list", "watch"]) sandbox.faults.failNext(3, 500, { verb, plural: "configmaps" });
      for (const name of ["a", "b", "c"]) {
        const made = await post(WIDGETS_PATH, widget(name));
        const child = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${name}-child` } };
        await post("/api/v1/namespaces/default/configmaps", adopt(child, { owner: made }));
      }
    },
  });
  await calls.until((c) => ["a", "b", "c"].every((n) => c.some((x) => x.name === n)), "the start-up reconciles");
  // Every child existed before the operator started: the first reconcile of each saw its own,
  // though the children's stream had to try four times.
  expect([...childSeen.entries()].sort()).toEqual([["a", true], ["b", true], ["c", true]]);
  const listings = ["list", "watch"].map((verb) => op.sandbox.stats.requests(verb, { plural: "configmaps" }));
  expect(listings[0]! + listings[1]!).toBeGreaterThanOrEqual(4);
  // A watch that expires (410 Gone) is listed again: the objects found unchanged run nothing.
  op.sandbox.faults.compact();
  op.sandbox.faults.expireWatches({ plural: "widgets" });
  await op.post(WIDGETS_PATH, widget("d"));
  await calls.until((c) => c.some((x) => x.name === "d"), "the new widget's reconcile");
  expect(["a", "b", "c", "d"].map((n) => calls.of(n).length)).toEqual([1, 1, 1, 1]);
}, 60_000);
