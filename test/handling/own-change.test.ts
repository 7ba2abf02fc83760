// What of a handler's own write to its object is folded into the cycle's patch (issue 30,
// defect 6): the paths the write names, never another writer's change that the answer shows too.

import { expect, test } from "bun:test";
import { namedBy, ownChange } from "../../src/handling/own-change.ts";
import type { KubeObject } from "../../src/kube/types.ts";

const object = (spec: Record<string, any>, labels?: Record<string, string>): KubeObject =>
  ({ apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "x", ...(labels ? { labels } : {}) }, spec });

test("an apply folds the fields it names, not another writer's change the answer shows", () => {
  const before = object({ size: 1 });
  const after = object({ size: 5, color: "red" });
  const named = namedBy("apply", { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "x" }, spec: { color: "red" } });
  expect(ownChange(before, after, named)).toEqual({ spec: { color: "red" } });
});

test("a JSON patch folds its paths, a path into a list as the whole list, and a removal of the last label as a null", () => {
  const before = object({ size: 1, items: [1, 2] }, { tier: "gold" });
  const after = object({ size: 5, items: [1] });
  const named = namedBy("json", [{ op: "test", path: "/spec/size", value: 1 }, { op: "remove", path: "/spec/items/1" }, { op: "remove", path: "/metadata/labels/tier" }]);
  expect(ownChange(before, after, named)).toEqual({ spec: { items: [1] }, metadata: { labels: { tier: null } } });
});

test("a strategic merge patch folds its keys and its directives' lists and maps; status and system metadata are never folded", () => {
  const before = object({ size: 1, ports: [80], env: { A: "1", B: "2" } });
  const after = object({ size: 5, ports: [80, 443], env: { A: "1" } });
  const named = namedBy("strategic", { spec: { "$setElementOrder/ports": [80, 443], env: { $retainKeys: ["A"] } }, status: { x: 1 }, metadata: { name: "x" } });
  expect(ownChange(before, after, named)).toEqual({ spec: { ports: [80, 443], env: { B: null } } });
});

test("a write whose parent another writer removed meanwhile folds nothing there", () => {
  const before = object({ size: 1, nested: { a: 1 } });
  const after = object({ size: 1 });
  expect(ownChange(before, after, namedBy("strategic", { spec: { nested: { a: null } } }))).toBeUndefined();
});
