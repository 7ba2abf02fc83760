// TaskScope: structured concurrency for every long-running task (seed 003).

import { expect, test } from "bun:test";
import { TaskScope } from "../../src/util/scope.ts";

test("close() aborts the tasks' signal and waits for them", async () => {
  const scope = new TaskScope("root");
  let sawAbort = false;
  scope.spawn("polite", (signal) => new Promise<void>((resolve) => signal.addEventListener("abort", () => ((sawAbort = true), resolve()))));
  expect(scope.running()).toEqual(["root/polite"]);
  const report = await scope.close(1000);
  expect(sawAbort).toBe(true);
  expect(report.abandoned).toEqual([]);
  expect(scope.running()).toEqual([]);
});

test("a task that ignores the abort is abandoned after the grace period and named", async () => {
  const scope = new TaskScope("root");
  const child = scope.child("ns-a");
  child.spawn("stubborn", () => new Promise(() => {}));
  const started = performance.now();
  const report = await scope.close(50);
  expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  expect(report.abandoned).toEqual(["root/ns-a/stubborn"]);
});

test("a child closed on its own is forgotten by its parent", async () => {
  const scope = new TaskScope("root");
  const child = scope.child("ns-gone");
  child.spawn("watch", (signal) => new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve())));
  expect(scope.running()).toEqual(["root/ns-gone/watch"]);
  await child.close(100);
  expect(scope.running()).toEqual([]);
  expect((scope as unknown as { children: Set<TaskScope> }).children.size).toBe(0);
  await scope.close(100);
});

test("a failing task is reported, not thrown; a closed scope refuses new tasks", async () => {
  const failures: string[] = [];
  const scope = new TaskScope("root", undefined, (name, error) => failures.push(`${name}: ${(error as Error).message}`));
  await scope.spawn("broken", async () => {
    throw new Error("boom");
  });
  expect(failures).toEqual(["broken: boom"]);
  await scope.close(0);
  expect(() => scope.spawn("late", async () => {})).toThrow(/closed/);
});
