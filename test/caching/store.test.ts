// The store of one resource (caching/): several streams' shelves, read as one set; a relist
// deletes only within its own stream; reads by name and labels; the bounded wait for a
// resourceVersion that makes reads never staler than our own writes.

import { describe, expect, test } from "bun:test";
import { Store } from "../../src/caching/index.ts";
import { vanished } from "../../src/caching/keys.ts";
import type { KubeObject } from "../../src/kube/types.ts";

const PODS = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true, statusSubresource: false };
const obj = (name: string, rv: string, uid = `uid-${name}`): KubeObject => ({ metadata: { name, uid, resourceVersion: rv } });
const pod = (namespace: string, name: string, rv: string, labels?: Record<string, string>): KubeObject => ({
  apiVersion: "v1", kind: "Pod", metadata: { namespace, name, uid: `${namespace}-${name}`, resourceVersion: rv, ...(labels ? { labels } : {}) }, spec: { big: "x" },
});
const names = (objects: KubeObject[]) => objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();
const NEVER = new AbortController().signal;

test("the relist diff finds exactly the known objects the relist did not see, by uid", () => {
  const known = new Map([["u1", obj("a", "1", "u1")], ["u2", obj("b", "1", "u2")], ["u3", obj("c", "1", "u3")]]);
  expect(vanished(known, new Set(["u1", "u3", "u9"])).map((o) => o.metadata.name)).toEqual(["b"]);
});

describe("one store, several streams", () => {
  test("a relist of one stream deletes only what that stream knew", () => {
    const store = new Store(PODS);
    const a = store.shelf("a");
    const b = store.shelf("b");
    a.begin();
    a.listed(pod("a", "one", "1"));
    a.listed(pod("a", "two", "2"));
    expect([...a.finish("3")]).toEqual([]);
    b.begin();
    b.listed(pod("b", "one", "4"));
    expect([...b.finish("5")]).toEqual([]);
    expect(store.size).toBe(3);
    // Namespace a relists and sees only "one": "two" is gone; b's object stays.
    expect(a.begin()).toBe(true);
    a.listed(pod("a", "one", "1"));
    expect([...a.finish("6")].map((o) => o.metadata.name)).toEqual(["two"]);
    expect(names(store.list())).toEqual(["a/one", "b/one"]);
  });

  test("reads by name, namespace and labels; a closed stream takes its objects along", () => {
    const store = new Store(PODS);
    const a = store.shelf();
    const b = store.shelf();
    a.apply("added", pod("a", "web", "1", { app: "web", tier: "front" }));
    a.apply("added", pod("a", "db", "2", { app: "db" }));
    b.apply("added", pod("b", "web", "3", { app: "web" }));
    expect(store.get("web", "a")?.metadata.resourceVersion).toBe("1");
    expect(store.get("web", "b")?.metadata.resourceVersion).toBe("3");
    expect(store.get("web")).toBeUndefined();
    expect(names(store.list({ namespace: "a" }))).toEqual(["a/db", "a/web"]);
    expect(names(store.list({ labelSelector: "app=web" }))).toEqual(["a/web", "b/web"]);
    expect(names(store.list({ labelSelector: "app in (web, db), !tier" }))).toEqual(["a/db", "b/web"]);
    expect(names(store.list({ labelSelector: "tier, app!=db" }))).toEqual(["a/web"]);
    expect(() => store.list({ labelSelector: "app=(" })).toThrow(/cannot read/);
    a.apply("modified", pod("a", "web", "4", { app: "web" }));
    expect(store.versionOf("web", "a")).toBe("4");
    a.apply("deleted", pod("a", "web", "5"));
    expect(store.get("web", "a")).toBeUndefined();
    b.close();
    expect(store.get("web", "b")).toBeUndefined();
    expect(names(store.list())).toEqual(["a/db"]);
  });

  test("a name deleted and made again (a relist lists the new uid before it deletes the old) reads as the new object", () => {
    const store = new Store(PODS);
    const shelf = store.shelf();
    shelf.begin();
    shelf.listed(pod("a", "x", "1"));
    [...shelf.finish("1")];
    expect(store.get("x", "a")?.metadata.uid).toBe("a-x");
    shelf.begin();
    shelf.listed({ ...pod("a", "x", "9"), metadata: { ...pod("a", "x", "9").metadata, uid: "new" } });
    expect([...shelf.finish("9")].map((o) => o.metadata.uid)).toEqual(["a-x"]);
    expect(store.get("x", "a")?.metadata.uid).toBe("new");
  });

  test("identities are kept, and read, when no reader needs bodies; changes carry the whole body", () => {
    const store = new Store(PODS, { keeps: "identity" });
    const heard: string[] = [];
    const stop = store.subscribe((change) => heard.push(`${change.type} ${change.object.metadata.name} ${change.object.spec ? "body" : "identity"}`));
    const shelf = store.shelf();
    shelf.apply("added", pod("a", "web", "1", { app: "web" }));
    expect(store.get("web", "a")).toEqual({ apiVersion: "v1", kind: "Pod", metadata: { namespace: "a", name: "web", uid: "a-web", resourceVersion: "1", labels: { app: "web" } } });
    expect(names(store.list({ labelSelector: "app=web" }))).toEqual(["a/web"]);
    shelf.apply("deleted", pod("a", "web", "2"));
    stop();
    shelf.apply("added", pod("a", "other", "3"));
    expect(heard).toEqual(["put web body", "delete web body"]);
  });
});

describe("reads never staler than our own writes", () => {
  test("caught up with an object once it holds that version or a later one", async () => {
    const store = new Store(PODS);
    const shelf = store.shelf();
    shelf.apply("added", pod("a", "web", "10"));
    expect(store.caughtUp("10", { name: "web", namespace: "a" })).toBe(true);
    expect(store.caughtUp("12", { name: "web", namespace: "a" })).toBe(false);
    const waiting = store.until("12", { object: { name: "web", namespace: "a" }, signal: NEVER, timeoutMs: 10_000 });
    shelf.apply("modified", pod("a", "web", "12"));
    expect(await waiting).toBe(true);
  });

  test("an object not held (a create not seen yet, a deletion): caught up once every stream is past the version", async () => {
    const store = new Store(PODS);
    const a = store.shelf();
    const b = store.shelf();
    expect(store.resourceVersion).toBeUndefined();
    a.begin();
    [...a.finish("5")];
    b.begin();
    [...b.finish("7")];
    expect(store.resourceVersion).toBe("5");
    const made = store.until("8", { object: { name: "new", namespace: "a" }, signal: NEVER, timeoutMs: 10_000 });
    a.reached("9"); // a BOOKMARK
    expect(store.caughtUp("8", { name: "new", namespace: "a" })).toBe(false); // b is still at 7
    b.reached("8");
    expect(await made).toBe(true);
    expect(store.resourceVersion).toBe("8");
  });

  test("the wait is bounded: false at its timeout or when its signal aborts, and nothing is left waiting", async () => {
    const store = new Store(PODS);
    store.shelf();
    expect(await store.until("3", { signal: NEVER, timeoutMs: 5 })).toBe(false);
    const stop = new AbortController();
    const waiting = store.until("3", { signal: stop.signal, timeoutMs: 10_000 });
    stop.abort();
    expect(await waiting).toBe(false);
    expect(await store.until("3", { signal: stop.signal, timeoutMs: 10_000 })).toBe(false);
  });
});
