// Indexes (issue 13): kept from the watch stream by uid, so an object's entries are replaced
// on each event and a relist never duplicates them; removed on deletion; read by any handler.

import { describe, expect, test } from "bun:test";
import { Indexes } from "../../src/handling/indexes.ts";
import { Registry } from "../../src/declaring/registry.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { testLogger } from "../peering/helpers.ts";
import { eventually } from "../runtime/helpers.ts";

const pods: Resource = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true, statusSubresource: true };
const secrets: Resource = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true, statusSubresource: false };
const pod = (uid: string, node: string | undefined, labels: Record<string, string> = {}): KubeObject =>
  ({ metadata: { uid, name: `pod-${uid}`, namespace: "default", labels }, spec: node ? { nodeName: node } : {} }) as KubeObject;

function byNode(): Indexes {
  const registry = new Registry();
  registry.on.index("pods", function byNode({ name, spec }) {
    return spec.nodeName ? { [spec.nodeName]: name } : undefined;
  });
  registry.on.index("pods", ({ name, labels }) => ({ [labels.app ?? "none"]: name }), { id: "byApp", labels: { app: (v: unknown) => v !== undefined } });
  return new Indexes(registry.indexes);
}

describe("an index kept from events", () => {
  test("get(key) gives every object's value under a key; iteration gives every key; an object moving keys leaves the old one", () => {
    const indexes = byNode();
    indexes.observe(pods, pod("1", "n1"), false);
    indexes.observe(pods, pod("2", "n1"), false);
    indexes.observe(pods, pod("3", "n2"), false);
    indexes.observe(pods, pod("4", undefined), false);
    const index = indexes.view.byNode!;
    expect(index.get("n1")).toEqual(["pod-1", "pod-2"]);
    expect([...index]).toEqual([["n1", ["pod-1", "pod-2"]], ["n2", ["pod-3"]]]);
    indexes.observe(pods, pod("2", "n2"), false);
    expect(index.get("n1")).toEqual(["pod-1"]);
    expect(index.get("n2")).toEqual(["pod-3", "pod-2"]);
    expect(index.get("n9")).toEqual([]);
    expect(index.size).toBe(2);
  });

  test("a relist (the same objects again) never duplicates; a deletion empties the index of the object", () => {
    const indexes = byNode();
    for (let i = 0; i < 3; i++) indexes.observe(pods, pod("1", "n1"), false);
    expect(indexes.view.byNode!.get("n1")).toEqual(["pod-1"]);
    indexes.observe(pods, pod("1", "n1"), true);
    expect(indexes.view.byNode!.size).toBe(0);
  });

  test("filters: an object that stops matching leaves the index; other resources are not indexed", () => {
    const indexes = byNode();
    indexes.observe(pods, pod("1", "n1", { app: "web" }), false);
    expect(indexes.view.byApp!.get("web")).toEqual(["pod-1"]);
    indexes.observe(pods, pod("1", "n1"), false);
    expect(indexes.view.byApp!.size).toBe(0);
    indexes.observe(secrets, pod("9", "n1"), false);
    expect(indexes.view.byNode!.get("n1")).toEqual(["pod-1"]);
    expect(indexes.covers(pods)).toBe(true);
    expect(indexes.covers(secrets)).toBe(false);
  });

  test("a failing index fn leaves the object out (not stale), and names the index", () => {
    const registry = new Registry();
    let fail = false;
    registry.on.index("pods", ({ name }) => {
      if (fail) throw new Error("boom");
      return { all: name };
    }, { id: "all" });
    const indexes = new Indexes(registry.indexes);
    indexes.observe(pods, pod("1", "n1"), false);
    fail = true;
    indexes.observe(pods, pod("1", "n1"), false);
    expect(indexes.view.all!.get("all")).toEqual([]);
  });

  test("registration: an index needs a name, and a distinct one; its resource is watched", () => {
    const registry = new Registry();
    expect(() => registry.on.index("pods", () => ({}))).toThrow("name the index");
    registry.on.index("pods", () => ({}), { id: "x" });
    expect(() => registry.on.index("secrets", () => ({}), { id: "x" })).toThrow('an index with id "x" is already registered');
    expect(registry.selectors()).toEqual(["pods"]);
  });
});

describe("priming: handlers wait for the indexed streams' first LIST", () => {
  const never = new AbortController().signal;

  test("primed once every stream listed or ended; a stream waiting out a freeze holds no one up until it lists again", async () => {
    const indexes = byNode();
    expect(indexes.primed(never)).toBeUndefined(); // no stream yet: nothing to wait for
    const a = indexes.stream();
    const b = indexes.stream();
    let primed = false;
    const waiting = indexes.primed(never)!.then((ok) => (primed = ok));
    a.listed();
    await Bun.sleep(0);
    expect(primed).toBe(false);
    b.paused(true); // frozen: it will relist later, and is not waited for meanwhile
    await waiting;
    expect(primed).toBe(true);
    b.paused(false); // about to list: waited for again
    expect(indexes.primed(never)).toBeDefined();
    b.end();
    expect(indexes.primed(never)).toBeUndefined();
    a.paused(true); // a stream that listed once never holds anyone up again
    a.paused(false);
    expect(indexes.primed(never)).toBeUndefined();
  });

  test("a waiter whose signal aborts gets false at once", async () => {
    const indexes = byNode();
    indexes.stream();
    const stop = new AbortController();
    const waiting = indexes.primed(stop.signal)!;
    stop.abort();
    expect(await waiting).toBe(false);
  });

  test("a stream that never lists is named, with the indexes waiting for it, in a warning after the bound and again periodically", async () => {
    const registry = new Registry();
    registry.on.index("pods", ({ name }) => ({ all: name }), { id: "everyPod" });
    const { logger, lines } = testLogger();
    const indexes = new Indexes(registry.indexes, logger, 40);
    indexes.stream(pods, "apps"); // its LIST refused (403) and retried for ever
    const warnings = () => lines.filter((line) => line.includes("has not completed its first LIST"));
    await eventually(() => warnings().length >= 2, "two warnings about the stream that does not list");
    expect(warnings()[0]).toContain("everyPod");
    expect(warnings()[0]).toContain("stream=pods@apps");
  });

  test("only the start-up streams prime: a stream started later (a namespace newly matching a glob) holds no handler", () => {
    const indexes = byNode();
    indexes.stream(pods, "apps").listed();
    expect(indexes.primed(never)).toBeUndefined();
    indexes.stream(pods, "apps-new"); // lists later, while handlers go on
    expect(indexes.primed(never)).toBeUndefined();
  });
});
