// ctx.cache's namespaces (docs/reconcile.md, "The cache"): a list reads the reconciled object's
// namespace by default, another one when named, every watched one with `namespace: null`; a get
// takes the namespace as its third argument; a cluster-scoped resource ignores the namespace; and
// kobun.yaml's `resources:` selectors narrow what the cache of an owned resource holds.

import { expect, test } from "bun:test";
import { Registry, resource } from "kobun";
import { Calls, runOperator, Widgets, WIDGETS_PATH } from "./kit.ts";

test("list: the object's namespace by default, a named one, or null for all; get in another namespace", async () => {
  const calls = new Calls();
  const views: Record<string, unknown>[] = [];
  const registry = new Registry();
  const names = (list: { metadata: { name?: string } }[]) => list.map((c) => c.metadata.name).sort();
  registry.on.reconcile(Widgets, (ctx) => {
    views.push({
      own: names(ctx.cache.list(resource.configmaps, { labelSelector: "test=ns" })),
      other: names(ctx.cache.list(resource.configmaps, { namespace: "other", labelSelector: "test=ns" })),
      all: names(ctx.cache.list(resource.configmaps, { namespace: null, labelSelector: "test=ns" })),
      got: ctx.cache.get(resource.configmaps, "there", "other")?.metadata.namespace,
      notHere: ctx.cache.get(resource.configmaps, "there") === undefined,
      // Cluster-scoped: the namespace is ignored.
      cluster: names(ctx.cache.list(resource.namespaces, { namespace: "default" })),
    });
    calls.record(ctx);
  }, { watches: [{ resource: resource.configmaps, map: () => null }, { resource: resource.namespaces, map: () => null }] });
  const configMap = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels: { test: "ns" } } });
  await using op = await runOperator(registry, {
    namespaces: ["default", "other"],
    before: async (post) => {
      await post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "other" } });
      await post("/api/v1/namespaces/default/configmaps", configMap("here"));
      await post("/api/v1/namespaces/other/configmaps", configMap("there"));
    },
  });
  await op.post(WIDGETS_PATH, { apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", metadata: { name: "w" }, spec: {} });
  await calls.until((c) => c.length >= 1, "the widget's reconcile");
  expect(views[0]).toEqual({ own: ["here"], other: ["there"], all: ["here", "there"], got: "other", notHere: true,
    cluster: expect.arrayContaining(["default", "other"]),
  });
}, 60_000);

test("kobun.yaml's resources: selector narrows what an owned resource's cache holds", async () => {
  const calls = new Calls();
  const views: string[][] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    views.push(ctx.cache.list(resource.configmaps).map((c) => c.metadata.name!).sort());
    calls.record(ctx);
  }, { owns: [resource.configmaps] });
  await using op = await runOperator(registry, {
    settings: { resources: { configmaps: { labelSelector: "keep=yes" } } },
    before: async (post) => {
      const configMap = (name: string, keep: string) => ({ metadata: { name, labels: { keep } } });
      await post("/api/v1/namespaces/default/configmaps", configMap("kept", "yes"));
      await post("/api/v1/namespaces/default/configmaps", configMap("left", "no"));
    },
  });
  await op.post(WIDGETS_PATH, { apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", metadata: { name: "w" }, spec: {} });
  await calls.until((c) => c.length >= 1, "the widget's reconcile");
  expect(views[0]).toEqual(["kept"]);
}, 60_000);

test("a watches map's key takes the watched object's namespace unless it names one", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => void calls.record(ctx), {
    watches: [{
      resource: resource.configmaps,
      map: (cm) => (cm.metadata.labels?.to === "here" ? { name: "w" } : { name: "w", namespace: "default" }),
    }],
  });
  const widget = { apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", metadata: { name: "w" }, spec: {} };
  await using op = await runOperator(registry, {
    namespaces: ["default", "other"],
    before: async (post) => {
      await post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "other" } });
      await post(WIDGETS_PATH, widget);
      await post(WIDGETS_PATH.replace("/default/", "/other/"), widget);
    },
  });
  await calls.until((c) => c.length >= 2, "both widgets' start-up runs");
  const inOther = (c: { namespace?: string }[]) => c.filter((x) => x.namespace === "other").length;
  await op.post("/api/v1/namespaces/other/configmaps", { metadata: { name: "a", labels: { to: "here" } } });
  await calls.until((c) => inOther(c) >= 2, "other/w woken");
  await op.post("/api/v1/namespaces/other/configmaps", { metadata: { name: "b", labels: { to: "default" } } });
  await calls.until((c) => c.filter((x) => x.namespace === "default").length >= 2, "default/w woken");
  expect(inOther(calls.all)).toBe(2);
}, 60_000);
