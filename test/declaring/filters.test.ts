// The filter functions every engine shares (declaring/filters.ts): values, PRESENT/ABSENT,
// predicates of the value and the context (made only when a predicate asks), Kopf's order.

import { expect, test } from "bun:test";
import { ABSENT, filtersPass, matchAny, matchMeta, matchValue, PRESENT } from "../../src/declaring/filters.ts";
import { objectFiltersPass } from "../../src/handling/selection.ts";
import type { KubeObject } from "../../src/kube/types.ts";

test("a predicate gets the value and the context; plain values, PRESENT and ABSENT never make a context", () => {
  let made = 0;
  const contextOf = () => (made++, { spec: { size: 3 } });
  expect(matchMeta({ app: "web", tier: PRESENT, old: ABSENT }, { app: "web", tier: "" }, contextOf)).toBe(true);
  expect(made).toBe(0);
  expect(matchValue((v: string, ctx: { spec: { size: number } }) => v === "x" && ctx.spec.size === 3, "x", contextOf)).toBe(true);
  expect(made).toBe(1);
  // A caller with no context (an older call site): a predicate of the value alone still works.
  expect(matchMeta({ app: (v: string | undefined) => v === "web" }, { app: "web" })).toBe(true);
  expect(matchValue({ a: [1] } as never, { a: [1] })).toBe(true); // compared by value
  expect(matchValue("x", undefined)).toBe(false);
});

test("matchAny: Kopf's value on an update, either side; no matcher means present on either side", () => {
  expect(matchAny("fast", ["slow", "fast"])).toBe(true);
  expect(matchAny("fast", ["slow", undefined])).toBe(false);
  expect(matchAny(undefined, [undefined, 1])).toBe(true);
  expect(matchAny(undefined, [undefined, undefined])).toBe(false);
  expect(matchAny(ABSENT, ["x", undefined])).toBe(true);
});

test("filtersPass runs labels, annotations, field, when in that order and stops at the first that fails", () => {
  const calls: string[] = [];
  const filters = {
    labels: { a: (v: unknown) => (calls.push("labels"), v === "1") },
    annotations: { b: (v: unknown) => (calls.push("annotations"), v === "2") },
    when: () => (calls.push("when"), true),
  };
  const field = () => (calls.push("field"), false);
  expect(filtersPass(filters, { labels: { a: "1" }, annotations: { b: "2" } }, field, () => ({}))).toBe(false);
  expect(calls).toEqual(["labels", "annotations", "field"]);
  calls.length = 0;
  expect(filtersPass(filters, { labels: { a: "0" } }, field, () => ({}))).toBe(false);
  expect(calls).toEqual(["labels"]);
});

test("objectFiltersPass makes the context once for all the callbacks, lends it a signal of its own, and reads the field", () => {
  const parent = new AbortController().signal;
  let made = 0;
  const signals: AbortSignal[] = [];
  const make = () => (made++, { signal: parent, spec: { mode: "fast" } });
  const spec = {
    field: ["spec", "mode"],
    options: {
      labels: { a: (_v: unknown, ctx: { signal: AbortSignal }) => (signals.push(ctx.signal), true) },
      value: (mode: string, ctx: { spec: { mode: string } }) => mode === ctx.spec.mode,
      when: (ctx: { signal: AbortSignal }) => (signals.push(ctx.signal), true),
    },
  };
  const body = { metadata: { labels: { a: "1" } }, spec: { mode: "fast" } } as unknown as KubeObject;
  expect(objectFiltersPass(spec, body, make, parent)).toBe(true);
  expect(made).toBe(1);
  expect(signals[0]).not.toBe(parent); // a listener a filter adds does not outlive the call on the shared signal
  const other = { ...body, spec: { mode: "slow" } } as KubeObject;
  expect(objectFiltersPass({ ...spec, options: { value: "fast" } }, other, make)).toBe(false);
  expect(objectFiltersPass({ options: {} }, body, () => { throw new Error("no filter, no context"); })).toBe(true);
});
