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
  shelf.apply("added", { ...job("a", "17"), metadata: { ...job("a", "17").metadata, uid: "uid-a-2" } }); // made again
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
  const writes = new OwnWrites(store, { now: () => now });
  writes.wrote(job("unwatched", "21"));
  writes.wrote({ ...job("unordered", "x"), metadata: { ...job("unordered", "x").metadata, resourceVersion: "not-a-number" } });
  expect(writes.pending).toBe(2);
  shelf.reached("22"); // a bookmark: the stream is past 21, and did not bring it
  expect(writes.get("unwatched", "ns")).toBeUndefined();
  expect(writes.pending).toBe(1);
  now += LAPSE_MS;
  expect(writes.pending).toBe(0);
});

test("created and deleted before the watch brought the create: the late ADDED does not show it again", () => {
  const { store, shelf } = listedStore();
  const writes = new OwnWrites(store);
  writes.wrote(job("brief", "30"));
  writes.deleted("brief", "ns", job("brief", "30"));
  shelf.apply("added", job("brief", "30")); // the create, delivered late
  expect(writes.get("brief", "ns")).toBeUndefined();
  expect(writes.list()).toEqual([]);
  shelf.apply("deleted", job("brief", "31"));
  expect(writes.kept).toBe(0);
});

test("a delete answered with a Status names the uid: an object made again under the name shows at once", () => {
  const { store, shelf } = listedStore(job("a", "5"));
  const writes = new OwnWrites(store);
  writes.deleted("a", "ns", { apiVersion: "v1", kind: "Status", metadata: {}, details: { uid: "uid-a" } } as never);
  expect(writes.get("a", "ns")).toBeUndefined();
  shelf.apply("deleted", job("a", "6"));
  shelf.apply("added", { ...job("a", "7"), metadata: { ...job("a", "7").metadata, uid: "another" } });
  expect(writes.get("a", "ns")?.metadata.uid).toBe("another");
});

test("entries the watch settles go without any read; with enabled: false nothing is kept", () => {
  const { store, shelf } = listedStore();
  const writes = new OwnWrites(store);
  for (let i = 0; i < 100; i++) writes.wrote(job(`j${i}`, String(40 + i)));
  for (let i = 0; i < 100; i++) shelf.apply("added", job(`j${i}`, String(40 + i)));
  expect(writes.kept).toBe(0);
  const off = new OwnWrites(store, { enabled: false });
  off.wrote(job("x", "200"));
  expect(off.get("x", "ns")).toBeUndefined();
  expect(off.kept).toBe(0);
});
