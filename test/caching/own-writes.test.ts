// Our own writes laid over the store until the watch brings them: a create shows at once in get
// and list, an update's answer wins over the store's older version, a delete hides the object; each
// entry goes once the store holds that version (or lets the object go), and a write the watch
// never brings lapses once every stream is past it.

import { expect, test } from "bun:test";
import { OwnWrites, LAPSE_MS, Store } from "../../src/caching/index.ts";
import type { KubeObject } from "../../src/kube/index.ts";

const JOBS = { group: "batch", version: "v1", plural: "jobs", kind: "Job", namespaced: true, statusSubresource: true };
const job = (name: string, rv: string, labels: Record<string, string> = { owner: "c" }): KubeObject => ({
  apiVersion: "batch/v1", kind: "Job", metadata: { namespace: "ns", name, uid: `uid-${name}`, resourceVersion: rv, labels },
});
const names = (objects: KubeObject[]) => objects.map((o) => o.metadata.name).sort();

function listedStore(...objects: KubeObject[]) {
  const store = new Store(JOBS);
  const shelf = store.shelf();
  shelf.begin();
  for (const object of objects) shelf.listed(object);
  shelf.finish("10");
  return { store, shelf };
}

test("a create shows at once, and leaves the overlay when the watch brings it", () => {
  const { store, shelf } = listedStore(job("old", "5"));
  const writes = new OwnWrites(store);
  writes.wrote(job("new", "11"));
  expect(names(writes.list({ labelSelector: "owner=c" }))).toEqual(["new", "old"]);
  expect(names(writes.list({ labelSelector: "owner=d" }))).toEqual([]);
  expect(names(writes.list({ namespace: "other" }))).toEqual([]);
  expect(writes.get("new", "ns")?.metadata.resourceVersion).toBe("11");
  expect(store.get("new", "ns")).toBeUndefined();
  shelf.apply("added", job("new", "11"));
  expect(writes.pending).toBe(0);
  expect(names(writes.list())).toEqual(["new", "old"]); // once, from the store
});

test("an update's answer wins over the store's older version, not over a newer one", () => {
  const { store, shelf } = listedStore(job("a", "5", { phase: "old" }));
  const writes = new OwnWrites(store);
  writes.wrote(job("a", "12", { phase: "new" }));
  expect(writes.get("a", "ns")?.metadata.labels).toEqual({ phase: "new" });
  expect(writes.list({ labelSelector: "phase=old" })).toEqual([]);
  expect(names(writes.list({ labelSelector: "phase=new" }))).toEqual(["a"]);
  shelf.apply("modified", job("a", "13", { phase: "newer" })); // someone else's change after ours
  expect(writes.get("a", "ns")?.metadata.labels).toEqual({ phase: "newer" });
  expect(writes.pending).toBe(0);
});

test("an older answer arriving after a newer one never hides it", () => {
  const { store } = listedStore();
  const writes = new OwnWrites(store);
  writes.wrote(job("a", "20"));
  writes.wrote(job("a", "15"));
  expect(writes.get("a", "ns")?.metadata.resourceVersion).toBe("20");
});

test("a delete hides the object until the store lets it go; one made again since shows", () => {
  const { store, shelf } = listedStore(job("a", "5"), job("b", "6"));
  const writes = new OwnWrites(store);
  writes.deleted("a", "ns", job("a", "5"));
  writes.deleted("b", "ns", { apiVersion: "v1", kind: "Status", metadata: {} } as KubeObject);
  expect(writes.get("a", "ns")).toBeUndefined();
  expect(names(writes.list())).toEqual([]);
  shelf.apply("deleted", job("a", "14"));
  shelf.apply("modified", job("b", "15")); // not the delete yet: b stays hidden
  expect(writes.get("b", "ns")).toBeUndefined();
  shelf.apply("deleted", job("b", "16"));
  shelf.apply("added", job("a", "17")); // made again by someone
  expect(names(writes.list())).toEqual(["a"]);
  expect(writes.pending).toBe(0);
});

test("a delete held by finalizers is the object, marked", () => {
  const { store } = listedStore(job("a", "5"));
  const writes = new OwnWrites(store);
  const marked = { ...job("a", "18"), metadata: { ...job("a", "18").metadata, deletionTimestamp: "t", finalizers: ["f"] } };
  writes.deleted("a", "ns", marked);
  expect(writes.get("a", "ns")?.metadata.deletionTimestamp).toBe("t");
});

test("a write the watch never brings (outside its selectors) lapses once every stream is past it, or after LAPSE_MS", () => {
  const { store, shelf } = listedStore();
  let now = 1_000;
  const writes = new OwnWrites(store, () => now);
  writes.wrote(job("unwatched", "21"));
  writes.wrote({ ...job("unordered", "x"), metadata: { ...job("unordered", "x").metadata, resourceVersion: "not-a-number" } });
  expect(writes.pending).toBe(2);
  shelf.reached("22"); // a bookmark: the stream is past 21, and did not bring it
  expect(writes.get("unwatched", "ns")).toBeUndefined();
  expect(writes.pending).toBe(1);
  now += LAPSE_MS;
  expect(writes.pending).toBe(0);
});
