// Corners of on.reconcile (docs/reconcile.md, docs/api.md) the other files here leave out: a throw after a
// child was made; a change before a pending requeue or TemporaryError delay; a watches map with duplicate,
// missing and foreign keys; which ownerReferences wake an owner; set-based selectors and resources read only
// through an index or another reconcile in ctx.cache; another widget's status read while the watch lags;
// observedGeneration of the generation seen; a deletion while a reconcile runs; requeues behind news; an
// on.create beside the reconcile; the kubebuilder CronJob example in a namespace of its own.

import { expect, test } from "bun:test";
import {
  adopt, appendOwnerReference, Registry, resource, TemporaryError, type ReconcileContext, type TargetObject,
} from "kobun";
import { startOperator } from "kobun/testing";
import { CronJobs, cronJobOptions, reconcileCronJob } from "../../examples/cronjob/handlers/cronjob.ts";
import { Calls, operate, runOperator, Widgets, WIDGETS_PATH } from "./kit.ts";

type WidgetCtx = ReconcileContext<TargetObject<typeof Widgets>>;

test("a throw after creating a child: the child stays, the patch is not written, the retry finds it", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx: WidgetCtx) => {
    const call = calls.record(ctx);
    const mine = ctx.cache.list(resource.configmaps).filter((c) => c.metadata.ownerReferences?.[0]?.uid === ctx.uid);
    const child = { apiVersion: "v1", kind: "ConfigMap", metadata: {}, data: {} }; // adopt: generateName
    if (mine.length === 0) await ctx.api.create(adopt(child, { owner: ctx.body }));
    ctx.patch.status.children = mine.length;
    if (call === 0) throw new Error("failed after the create");
  }, { owns: [resource.configmaps] });
  await using kit = await operate(registry, { reconcile: { backoff: { initial: "20ms" } } });
  kit.sandbox.faults.delayWatches(3000, { plural: "configmaps" }); // the retry comes long before the watch's news
  await kit.apply(Widgets, { metadata: { name: "t" }, spec: {} });
  const done = await kit.until(Widgets, "t", (o) => o.status?.children !== undefined);
  expect(done.status?.children).toBe(1); // the retry saw the child the failed call made: generateName made no second
  expect(calls.all.map((c) => c.retry).slice(0, 2)).toEqual([0, 1]);
}, 60_000);

test("a change before a pending requeue runs it at once; the requeue the first call asked for is moot", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx: WidgetCtx) => {
    const call = calls.record(ctx);
    if (call === 0) return { requeueAfter: 600 };
    if (call === 1) return { requeueAfter: 60 };
  });
  await using kit = await operate(registry, undefined, { clock: "virtual" });
  await kit.apply(Widgets, { metadata: { name: "q" }, spec: {} });
  await calls.until((c) => c.length === 1, "the first run");
  await kit.apply(Widgets, { metadata: { name: "q" }, spec: { size: 2 } });
  await calls.until((c) => c.length === 2, "the change's run, long before the requeue");
  expect(calls.all[1]!.generation).toBe(2);
  await kit.advance(60);
  await calls.until((c) => c.length === 3, "the second call's requeue");
  await kit.advance(700); // past the first call's 600 s: its result was replaced by later ones
  expect(calls.all.length).toBe(3);
}, 60_000);

test("a change runs it during a TemporaryError's delay, as a retry; after its success the delay is moot", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx: WidgetCtx) => {
    if (calls.record(ctx) === 0) throw new TemporaryError("the bucket is not ready", { delay: 3600 });
  });
  await using kit = await operate(registry, undefined, { clock: "virtual" });
  await kit.apply(Widgets, { metadata: { name: "d" }, spec: {} });
  await kit.logs.until(/the bucket is not ready/);
  await kit.apply(Widgets, { metadata: { name: "d", labels: { poke: "1" } }, spec: {} });
  await calls.until((c) => c.length === 2, "the change's run");
  expect(calls.all[1]!.retry).toBe(1); // one failure in a row before it
  await kit.advance(3700);
  expect(calls.all.length).toBe(2);
}, 60_000);

test("watches: duplicate keys wake an object once; missing objects and unwatched namespaces wake nothing", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => void calls.record(ctx), {
    watches: [{
      resource: resource.configmaps,
      map: () => [{ name: "w" }, { name: "w" }, { name: "w", namespace: "default" }, { name: "ghost" },
        { name: "w", namespace: "nowhere" }],
    }],
  });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "w" }, spec: {} });
  await calls.until((c) => c.length === 1, "the first run");
  await kit.apply(resource.configmaps, { metadata: { name: "settings" }, data: { a: "1" } });
  await calls.until((c) => c.length === 2, "the wake");
  await kit.consistently(resource.configmaps, "settings", (c) => c?.data?.a === "1", { for: 400 });
  expect(calls.all.map((c) => `${c.namespace}/${c.name}`)).toEqual(["default/w", "default/w"]);
  expect(kit.logs.lines.filter((l) => /error/i.test(l))).toEqual([]);
}, 60_000);

test("only a controller reference of the reconciled kind and group, in the child's namespace, wakes", async () => {
  const calls = new Calls();
  const seen: string[][] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    calls.record(ctx);
    seen.push(ctx.cache.list(resource.configmaps, { namespace: null }).map((c) => c.metadata.name!).sort());
  }, { owns: [resource.configmaps] });
  await using op = await runOperator(registry, {
    namespaces: ["default", "other"], settings: { workers: { batchWindow: 0 } },
    before: (post) => post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "other" } }),
  });
  const apiVersion = "blackbox.kobun.dev/v1";
  const owner = await op.post(WIDGETS_PATH, { apiVersion, kind: "Widget", metadata: { name: "w" }, spec: {} });
  await calls.until((c) => c.length === 1, "the first run");
  const ref = (v: string) => [{ apiVersion: v, kind: "Widget", name: "w", uid: owner.metadata.uid, controller: true }];
  const loose = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "loose" } };
  appendOwnerReference(loose, owner, { controller: false });
  await op.post("/api/v1/namespaces/other/configmaps",
    { metadata: { name: "abroad", ownerReferences: ref("blackbox.kobun.dev/v1") } });
  await op.post("/api/v1/namespaces/default/configmaps", loose);
  await op.post("/api/v1/namespaces/default/configmaps",
    { metadata: { name: "foreign", ownerReferences: ref("other.kobun.dev/v1") } });
  await op.post("/api/v1/namespaces/default/configmaps",
    { metadata: { name: "v2", ownerReferences: ref("blackbox.kobun.dev/v2") } }); // another version: still ours
  await calls.until((c) => c.length >= 2, "the wake by v2");
  expect(seen.length).toBe(2); // loose, foreign and abroad woke nothing
  expect(seen[1]).toEqual(expect.arrayContaining(["abroad", "foreign", "loose", "v2"]));
}, 60_000);

test("ctx.cache.list takes set-based label selectors, as a LIST does", async () => {
  const calls = new Calls();
  const views: Record<string, string[]> = {};
  const cms = resource.configmaps;
  const selectors = ["tier in (web,api)", "tier notin (web)", "!legacy", "legacy", "tier in (web),env=prod",
    "env!=prod"];
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    for (const s of selectors) views[s] = ctx.cache.list(cms, { labelSelector: s }).map((c) => c.metadata.name!).sort();
    calls.record(ctx);
  }, { watches: [{ resource: cms, map: () => null }] });
  await using kit = await operate(registry);
  const labels = { a: { tier: "web", env: "prod" }, b: { tier: "api", legacy: "yes" }, c: { tier: "db" }, d: {} };
  for (const [name, to] of Object.entries(labels)) await kit.apply(cms, { metadata: { name, labels: to } });
  await kit.apply(Widgets, { metadata: { name: "sel" }, spec: {} });
  await calls.until((c) => c.length >= 1, "the run");
  expect(views).toEqual({
    "tier in (web,api)": ["a", "b"], "tier notin (web)": ["b", "c", "d"], "!legacy": ["a", "c", "d"],
    legacy: ["b"], "tier in (web),env=prod": ["a"], "env!=prod": ["b", "c", "d"],
  });
}, 60_000);

test("another widget's status written by its reconcile shows in ctx.cache at once, while the watch lags", async () => {
  const calls = new Calls();
  const read: (number | undefined)[] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx: WidgetCtx) => {
    calls.record(ctx);
    if (ctx.name === "b") read.push(ctx.cache.get(Widgets, "a")?.status?.children);
    if (ctx.name !== "a") return;
    ctx.patch.status.children = ctx.spec.size ?? 0;
    if (ctx.spec.size === 5 && calls.of("a").filter((c) => c.generation === 2).length === 1) return { requeueAfter: 0 };
  }, { watches: [{ resource: resource.configmaps, map: (cm) => (cm.metadata.name === "poke" ? { name: "b" } : []) }] });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "a" }, spec: { size: 1 } });
  await kit.until(Widgets, "a", (o) => o.status?.children === 1);
  await kit.apply(Widgets, { metadata: { name: "b" }, spec: {} });
  await calls.until((c) => c.some((x) => x.name === "b"), "b's first run");
  kit.sandbox.faults.delayWatches(3000, { plural: "widgets" });
  await kit.apply(Widgets, { metadata: { name: "a" }, spec: { size: 5 } });
  // a's requeued call starts once its status write (children 5) is answered; the watch holds it 3 s more.
  await calls.until((c) => c.filter((x) => x.name === "a" && x.generation === 2).length === 2, "a's requeue");
  await kit.apply(resource.configmaps, { metadata: { name: "poke", labels: { to: "b" } } });
  await calls.until((c) => c.filter((x) => x.name === "b").length === 2, "b woken by the ConfigMap");
  expect(read).toEqual([1, 5]);
}, 60_000);

test("ctx.cache reads a resource that only an on.index or another resource's reconcile declares", async () => {
  const calls = new Calls();
  const seen: unknown[] = [];
  const registry = new Registry();
  registry.on.index(resource.secrets, function secretNames({ name }) { return { [name]: true }; });
  registry.on.reconcile(resource.configmaps, () => {});
  registry.on.reconcile(Widgets, (ctx) => {
    seen.push([ctx.cache.get(resource.secrets, "s")?.metadata.name, ctx.cache.get(resource.configmaps, "c")?.data]);
    calls.record(ctx);
  });
  await using kit = await operate(registry);
  await kit.apply(resource.secrets, { metadata: { name: "s" }, stringData: { k: "v" } });
  await kit.apply(resource.configmaps, { metadata: { name: "c" }, data: { a: "1" } });
  await kit.apply(Widgets, { metadata: { name: "r" }, spec: {} });
  await calls.until((c) => c.length === 1, "the run");
  expect(seen).toEqual([["s", { a: "1" }]]);
}, 60_000);

test("requeueAfter 0 is at once, behind news: a new object runs before the requeues waiting with it", async () => {
  const calls = new Calls();
  const { promise: arrived, resolve: arrive } = Promise.withResolvers<void>();
  let looping = true;
  const registry = new Registry();
  registry.on.index(Widgets, function names({ name }) {
    if (name === "news") arrive(); // indexed as the event arrives, before it is queued
    return { all: name };
  });
  registry.on.reconcile(Widgets, async (ctx) => {
    calls.record(ctx);
    if (ctx.name === "hold" && calls.of("hold").length === 1) await arrived; // the one worker, until news is queued
    if (ctx.name.startsWith("r") && looping) return { requeueAfter: 0 };
  });
  await using kit = await operate(registry, { workers: { limit: 1, batchWindow: 0 } });
  for (const name of ["r1", "r2", "r3", "r4", "hold", "news"]) {
    await kit.apply(Widgets, { metadata: { name }, spec: {} });
    if (name === "r4") await calls.until((c) => c.filter((x) => x.name === "r4").length >= 2, "four looping");
    if (name === "hold") await calls.until((c) => c.some((x) => x.name === "hold"), "the worker held");
  }
  await calls.until((c) => c.some((x) => x.name === "news"), "the new object's run");
  looping = false;
  const names = calls.all.map((c) => c.name);
  expect(names.slice(names.indexOf("hold") + 1, names.indexOf("news"))).toEqual([]); // no requeue ahead of it
}, 60_000);

test("status.observedGeneration is the generation the call saw, not the one current when it is written", async () => {
  const calls = new Calls();
  const { promise: gate, resolve: open } = Promise.withResolvers<void>();
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx: WidgetCtx) => {
    if (calls.record(ctx) === 0) await gate;
    ctx.patch.status.children = ctx.spec.size;
  });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "g" }, spec: { size: 1 } });
  await calls.until((c) => c.length === 1, "the first run, held");
  await kit.apply(Widgets, { metadata: { name: "g" }, spec: { size: 2 } });
  const states: string[] = [];
  const settled = kit.until(Widgets, "g", (o) => {
    if (o.status?.children !== undefined) states.push(`${o.status.children}@${o.status.observedGeneration}`);
    return o.status?.children === 2;
  });
  open();
  const last = await settled;
  expect(last.status?.observedGeneration).toBe(2);
  expect(states.every((s) => s === "1@1" || s === "2@2")).toBe(true); // never size 1 claimed for generation 2
}, 60_000);

test("with finalizer: true, a deletion mark waits for the running call; then ctx.deleting releases", async () => {
  const calls = new Calls();
  const release = Promise.withResolvers<void>();
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx: WidgetCtx) => {
    if (calls.record(ctx) > 0) return;
    await release.promise; // the first call runs on until the test lets it end
    expect(ctx.signal.aborted).toBe(false); // the deletion mark did not abort it (docs/reconcile.md)
  }, { finalizer: true, timeout: 20 }); // the timeout only bounds the test
  await using kit = await operate(registry, undefined, { timeout: 30_000 });
  await kit.apply(Widgets, { metadata: { name: "x" }, spec: {} });
  await calls.until((c) => c.length === 1, "the first run, waiting");
  await kit.delete(Widgets, "x");
  await kit.consistently(Widgets, "x", (o) => o?.metadata.deletionTimestamp !== undefined || o === undefined,
    { for: 300 });
  expect(calls.all.map((c) => c.deleting)).toEqual([false]); // held by the finalizer, no deleting call yet
  release.resolve();
  await kit.gone(Widgets, "x");
  expect(calls.all.map((c) => c.deleting)).toEqual([false, true]);
}, 60_000);

test("an on.create of the owned resource beside the reconcile: its write of the child wakes the owner", async () => {
  const calls = new Calls();
  const stamps: (string | undefined)[] = [];
  const registry = new Registry();
  registry.on.create(resource.configmaps, ({ patch }) => void (patch.metadata.labels = { stamped: "yes" }));
  registry.on.reconcile(Widgets, async (ctx: WidgetCtx) => {
    if (calls.all.length === 0) { // a blind write: its own echo wakes nothing
      calls.record(ctx);
      const child = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${ctx.name}-c` } };
      return void await ctx.api.apply(adopt(child, { owner: ctx.body }));
    }
    stamps.push(ctx.cache.get(resource.configmaps, `${ctx.name}-c`)?.metadata.labels?.stamped);
    calls.record(ctx);
  }, { owns: [resource.configmaps] });
  await using kit = await operate(registry);
  await kit.apply(Widgets, { metadata: { name: "m" }, spec: {} });
  await kit.until(resource.configmaps, "m-c", (c) => c.metadata.labels?.stamped === "yes");
  await calls.until(() => stamps.includes("yes"), "the owner's run after on.create stamped its child");
}, 60_000);

test("the kubebuilder CronJob in a namespace of its own: a bad schedule warns until fixed; a Job deleted by hand " +
  "leaves status.active", async () => {
  const registry = new Registry();
  registry.on.reconcile(CronJobs, reconcileCronJob, cronJobOptions);
  await using kit = await startOperator({ registry, clock: "virtual", namespace: "batch", logLevel: "silent",
    timeout: 15_000 });
  const pod = { containers: [{ name: "c", image: "busybox" }], restartPolicy: "Never" as const };
  const spec = (schedule: string) => ({ schedule, jobTemplate: { spec: { template: { spec: pod } } } });
  const made = await kit.apply(CronJobs, { metadata: { name: "nightly" }, spec: spec("every day") });
  const warned = (l: { type?: string; reason?: string }[]) =>
    l.some((e) => e.type === "Warning" && e.reason === "Reconcile");
  expect(warned(await kit.events(made, { until: warned }))).toBe(true);
  await kit.apply(CronJobs, { metadata: { name: "nightly" }, spec: spec("*/5 * * * *") });
  await kit.until(CronJobs, "nightly", (o) => o.status?.observedGeneration === 2);
  const due = Math.floor(kit.now().getTime() / 300_000) * 300_000 + 300_000;
  await kit.advance((due - kit.now().getTime()) / 1000);
  const running = await kit.until(CronJobs, "nightly", (o) => o.status?.active?.length === 1);
  const job = running.status!.active![0]!;
  expect(job).toMatchObject({ name: `nightly-${due / 1000}`, namespace: "batch" });
  await kit.delete(resource.jobs, job.name);
  await kit.gone(resource.jobs, job.name);
  const after = await kit.until(CronJobs, "nightly", (o) => o.status?.active?.length === 0);
  expect(after.status?.lastScheduleTime).toBe(new Date(due).toISOString().replace(".000Z", "Z"));
}, 60_000);
