// A health problem belongs to its component and lives no longer than the component's signal.

import { expect, test } from "bun:test";
import { Health } from "../../src/observability/health.ts";

test("a component's problem is reported until it recovers", () => {
  const health = new Health();
  const watch = health.component("watch configmaps in a", new AbortController().signal);
  watch.fail("403 forbidden");
  expect(health.report()).toEqual({ healthy: false, problems: { "watch configmaps in a": "403 forbidden" } });
  watch.clear();
  expect(health.report()).toEqual({ healthy: true, problems: {} });
});

test("a component's problem ends with its life, and a released component reports nothing", () => {
  const health = new Health();
  const life = new AbortController();
  const watch = health.component("watch configmaps in a", life.signal);
  watch.fail("403 forbidden");
  life.abort();
  expect(health.healthy).toBe(true);
  watch.fail("late failure after the end");
  expect(health.healthy).toBe(true);
  const born = new AbortController();
  born.abort();
  health.component("born ended", born.signal).fail("never shown");
  expect(health.healthy).toBe(true);
});

test("the end of an older component leaves its successor's problem of the same name alone", () => {
  const health = new Health();
  const first = new AbortController();
  health.component("watch configmaps in a", first.signal).fail("old");
  const second = health.component("watch configmaps in a", new AbortController().signal);
  second.fail("new");
  first.abort();
  expect(health.report().problems).toEqual({ "watch configmaps in a": "new" });
});
