// Index keys that are not strings (issue 33): tuples as Kopf's hashable keys, compared by value,
// returned as pairs or a Map; read back as given; lookups through ctx.cache's `index` too.

import { expect, test } from "bun:test";
import { OwnWrites, Store } from "../../src/caching/index.ts";
import { Registry } from "../../src/declaring/registry.ts";
import type { Index } from "../../src/declaring/indexes.ts";
import { CacheView, lookupAmong } from "../../src/handling/cache.ts";
import { Indexes } from "../../src/handling/indexes.ts";
import { encodeKey } from "../../src/handling/index-keys.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { testLogger } from "../peering/helpers.ts";

const PODS: Resource = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true, statusSubresource: true };
const pod = (uid: string, namespace: string, labels: Record<string, string> = {}): KubeObject =>
  ({ metadata: { uid, name: `pod-${uid}`, namespace, labels, resourceVersion: uid } }) as KubeObject;

function tupleIndexes(logger = testLogger().logger): Indexes {
  const registry = new Registry();
  registry.on.index("pods", ({ namespace, name }) => [[[namespace ?? "", name], true]], { id: "byPlace" });
  registry.on.index("pods", ({ labels, name }) => new Map(Object.entries(labels).map(([k, v]) => [[k, v], name])),
    { id: "byLabel" });
  registry.on.index("pods", ({ labels }) => (labels.bad ? [[{ not: "a key" } as never, 1]] : { [labels.n ?? "0"]: 1 }),
    { id: "mixed" });
  return new Indexes(registry.indexes, logger);
}

test("a tuple key is found by another array with the same items, and comes back as the array", () => {
  const indexes = tupleIndexes();
  indexes.observe(PODS, pod("1", "default", { app: "web", tier: "front" }), false);
  indexes.observe(PODS, pod("2", "other", { app: "web" }), false);
  const byPlace = indexes.view.byPlace as Index<boolean, [string, string]>;
  const byLabel = indexes.view.byLabel as Index<string, [string, string]>;
  expect(byPlace.get(["default", "pod-1"])).toEqual([true]);
  expect(byPlace.has(["other", "pod-2"])).toBe(true);
  expect(byPlace.has(["other", "pod-1"])).toBe(false);
  expect([...byPlace.keys()]).toEqual([["default", "pod-1"], ["other", "pod-2"]]);
  expect(byLabel.get(["app", "web"])).toEqual(["pod-1", "pod-2"]);
  expect([...byLabel]).toEqual([[["app", "web"], ["pod-1", "pod-2"]], [["tier", "front"], ["pod-1"]]]);
  // A key kept is the index's own: changing the array a lookup or the fn used changes nothing.
  expect(Object.isFrozen([...byLabel.keys()][0])).toBe(true);
  indexes.observe(PODS, pod("1", "default", { tier: "front" }), false);
  expect(byLabel.get(["app", "web"])).toEqual(["pod-2"]);
  indexes.observe(PODS, pod("2", "other"), true);
  expect(byLabel.has(["app", "web"])).toBe(false);
  expect(byPlace.size).toBe(1);
});

test("keys of different types never meet: a tuple, its JSON, its joined string, a number and its digits", () => {
  const keys = [["a", "b"], '["a","b"]', "a,b", 1, "1", true, "true", null, "null", "\u0000x", ["a", ["b"]], []];
  const encoded = keys.map((key) => encodeKey(key as never));
  expect(new Set(encoded).size).toBe(keys.length);
  expect(encodeKey("plain")).toBe("plain"); // the common key is kept as itself
  expect(() => encodeKey(Number.NaN)).toThrow("a string, a finite number, a boolean, null or an array of them");
  expect(() => encodeKey(["a", { b: 1 }] as never)).toThrow('got an object inside ["a",{"b":1}]');
});

test("a bad key leaves the object out of that index with an error naming the index; string keys still work", () => {
  const { logger, lines } = testLogger();
  const indexes = tupleIndexes(logger);
  indexes.observe(PODS, pod("1", "default", { n: "7" }), false);
  indexes.observe(PODS, pod("2", "default", { bad: "1" }), false);
  expect(indexes.view.mixed!.get("7")).toEqual([1]);
  expect(indexes.view.mixed!.size).toBe(1);
  expect(lines.some((l) => l.includes("index fn failed") && l.includes("mixed") && l.includes("got an object"))).toBe(true);
});

test("ctx.cache.list({ index: { id, key } }) takes a tuple key", () => {
  const indexes = tupleIndexes();
  const store = new Store(PODS);
  const shelf = store.shelf();
  shelf.begin();
  const pods = [pod("1", "default", { app: "web" }), pod("2", "default", { app: "db" })];
  for (const p of pods) {
    shelf.listed(p);
    indexes.observe(PODS, p, false);
  }
  shelf.finish("10");
  const view = new CacheView(lookupAmong([{ resource: PODS, store, writes: new OwnWrites(store) }]), "default", "-", indexes);
  const found = view.list("pods", { index: { id: "byLabel", key: ["app", "db"] } });
  expect(found.map((o: KubeObject) => o.metadata.name)).toEqual(["pod-2"]);
  expect(view.list("pods", { index: { id: "byLabel", key: ["app", "none"] } })).toEqual([]);
});
