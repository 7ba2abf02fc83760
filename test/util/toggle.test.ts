// The freeze toggle: holders, the running signal, and a namespace toggle under the operator's.

import { expect, test } from "bun:test";
import { Toggle } from "../../src/util/toggle.ts";

test("freezing aborts the running signal; unfreezing hands out a fresh one and wakes waiters", async () => {
  const toggle = new Toggle();
  const first = toggle.runningSignal;
  toggle.freeze("peering:a", "peer x is alive");
  expect(first.aborted).toBe(true);
  const waiting = toggle.waitRunning(new AbortController().signal);
  toggle.unfreeze("peering:a");
  expect(await waiting).toBe(true);
  expect(toggle.runningSignal.aborted).toBe(false);
});

test("it runs only when no holder freezes it", () => {
  const toggle = new Toggle();
  toggle.freeze("a");
  toggle.freeze("b");
  toggle.unfreeze("a");
  expect(toggle.frozen).toBe(true);
  expect(toggle.reasons()).toEqual({ b: "b" });
  toggle.unfreeze("b");
  expect(toggle.frozen).toBe(false);
});

test("a child toggle freezes with its parent, but its own freeze leaves the parent and siblings running", () => {
  const operator = new Toggle();
  const nsA = new Toggle(operator);
  const nsB = new Toggle(operator);
  const aSignal = nsA.runningSignal;
  nsA.freeze("peering:ns-a/default");
  expect(aSignal.aborted).toBe(true);
  expect(operator.frozen).toBe(false);
  expect(nsB.frozen).toBe(false);

  const bSignal = nsB.runningSignal;
  operator.freeze("lease:x");
  expect(bSignal.aborted).toBe(true);
  expect(nsB.frozen).toBe(true);
  operator.unfreeze("lease:x");
  expect(nsB.frozen).toBe(false);
  expect(nsB.runningSignal.aborted).toBe(false);
  expect(nsA.frozen).toBe(true); // still held by its own peering
  nsA.unfreeze("peering:ns-a/default");
  expect(nsA.frozen).toBe(false);
});

test("waitRunning gives up when its signal aborts", async () => {
  const toggle = new Toggle();
  toggle.freeze("a");
  const stop = new AbortController();
  const waiting = toggle.waitRunning(stop.signal);
  stop.abort();
  expect(await waiting).toBe(false);
});
