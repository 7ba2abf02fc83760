// What the stored base becomes once the handlers' own patch is applied (essence.ts).

import { expect, test } from "bun:test";
import { applyToEssence, combinePatches, essenceOf } from "../../src/handling/essence.ts";

const body = { apiVersion: "v1", kind: "X", metadata: { name: "a", labels: { app: "a" }, annotations: { "kobun.dev/x": "1", keep: "k" } }, spec: { size: 1, tags: ["t"] }, status: { s: 1 } };

test("a patch of status alone leaves the essence as it is", () => {
  const essence = essenceOf(body as any);
  expect(applyToEssence(essence, { status: { greeting: "hello" } })).toBe(essence);
  expect(applyToEssence(essence, { status: { a: 1 }, metadata: { finalizers: ["f"] } })).toBe(essence);
});

test("a patch of spec, labels or annotations is merged in: nulls delete, kobun's own annotations stay out", () => {
  const essence = essenceOf(body as any);
  const after = applyToEssence(essence, { spec: { size: 2, tags: null }, metadata: { labels: { tier: "x" }, annotations: { "kobun.dev/y": "2", other: "o" } }, status: { x: 1 } });
  expect(after).toEqual({ spec: { size: 2 }, metadata: { labels: { app: "a", tier: "x" }, annotations: { keep: "k", other: "o" } } });
  expect(essence).toEqual({ spec: { size: 1, tags: ["t"] }, metadata: { labels: { app: "a" }, annotations: { keep: "k" } } });
});

test("combined patches keep nulls (deletions to send) and the later one wins", () => {
  expect(combinePatches({ a: 1, b: { c: 1, d: 2 } }, { b: { c: null, e: 3 }, f: null })).toEqual({ a: 1, b: { c: null, d: 2, e: 3 }, f: null });
});
