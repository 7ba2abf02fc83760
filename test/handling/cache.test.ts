// ctx.cache: reads of what the operator watches from its stores, with its own writes laid over
// them; namespaces default as ctx.api's; a resource it does not watch is an error that says how
// to watch it, never a read through.

import { expect, test } from "bun:test";
import { OwnWrites, Store } from "../../src/caching/index.ts";
import { resource } from "../../src/declaring/index.ts";
import { CacheView, lookupAmong } from "../../src/handling/cache.ts";
import type { KubeObject } from "../../src/kube/index.ts";

const JOBS = { group: "batch", version: "v1", plural: "jobs", kind: "Job", namespaced: true, statusSubresource: true, singular: "job" };
const NODES = { group: "", version: "v1", plural: "nodes", kind: "Node", namespaced: false, statusSubresource: true };
const job = (namespace: string, name: string, rv: string): KubeObject => ({
  apiVersion: "batch/v1", kind: "Job", metadata: { namespace, name, uid: `${namespace}/${name}`, resourceVersion: rv, labels: { app: name } },
});

function cached(res: typeof JOBS | typeof NODES, ...objects: KubeObject[]) {
  const store = new Store(res);
  const shelf = store.shelf();
  shelf.begin();
  objects.forEach((o) => shelf.listed(o));
  shelf.finish("100");
  return { resource: res, store, writes: new OwnWrites(store) };
}

const jobs = cached(JOBS, job("a", "one", "1"), job("a", "two", "2"), job("b", "one", "3"));
const nodes = cached(NODES, { metadata: { name: "n1", uid: "n1", resourceVersion: "4" } });
const view = new CacheView(lookupAmong([jobs, nodes]), "a", "add it to owns or watches");

test("reads default to the handled object's namespace; null reads every namespace; cluster-scoped ignore it", () => {
  expect(view.get("jobs", "one")?.metadata.uid).toBe("a/one");
  expect(view.get("batch/v1/jobs", "one", "b")?.metadata.uid).toBe("b/one");
  expect(view.list("jobs").map((o: KubeObject) => o.metadata.uid).sort()).toEqual(["a/one", "a/two"]);
  expect(view.list(resource.jobs, { namespace: null, labelSelector: "app=one" }).map((o) => o.metadata.uid).sort()).toEqual(["a/one", "b/one"]);
  expect(view.get("nodes", "n1")?.metadata.uid).toBe("n1");
});

test("our own create shows before the watch brings it", () => {
  jobs.writes.wrote(job("a", "three", "101"));
  expect(view.list("Job").map((o: KubeObject) => o.metadata.name).sort()).toEqual(["one", "three", "two"]);
});

test("a resource the operator does not watch is an error naming it and how to watch it", () => {
  expect(() => view.get("configmaps", "x")).toThrow("ctx.cache cannot read configmaps: the operator does not watch it; add it to owns or watches");
  expect(() => view.list("apps/v1/deployments")).toThrow(/cannot read apps\/v1\/deployments/);
});
