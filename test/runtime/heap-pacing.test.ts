// Heap pacing (issue 15): a burst's garbage is collected once the heap outgrew half of what was
// live (at least 6 MiB), instead of JavaScriptCore's 32 MiB of new cells per collection, which a
// compiled program then keeps as RSS. The decision with numbers, the real heap of this process,
// and the pacer's lifetime with the operators of a process.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { heapSize } from "bun:jsc";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { HEADROOM_MIN, HEADROOM_RATIO, HeapPacer, QUIET_BYTES, QUIET_TICKS, SETTLE_MIN, SETTLE_RATIO, heapActivity, paceHeap, pacerAwake, pacing } from "../../src/runtime/heap-pacing.ts";
import type { Resource } from "../../src/kube/types.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";

const MiB = 1024 * 1024;
const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

/** A heap of numbers: `grow` allocates, `collect` leaves `live`. */
function fakeHeap(live: number) {
  const heap = { size: live, live, collections: 0 };
  const pacer = new HeapPacer(() => heap.size, () => {
    heap.collections++;
    heap.size = heap.live;
  });
  return { heap, pacer };
}

test("a small heap is collected once it grew by the minimum headroom, not before", () => {
  const { heap, pacer } = fakeHeap(4 * MiB);
  heap.size = 4 * MiB + HEADROOM_MIN - 1;
  expect(pacer.tick()).toBe(false);
  heap.size = 4 * MiB + HEADROOM_MIN;
  expect(pacer.tick()).toBe(true);
  expect(heap.collections).toBe(1);
  expect(heap.size).toBe(4 * MiB);
});

test("a large heap may grow by half its live size before it is collected", () => {
  const { heap, pacer } = fakeHeap(40 * MiB);
  heap.size = 40 * MiB + 40 * MiB * HEADROOM_RATIO - 1;
  expect(pacer.tick()).toBe(false);
  heap.size = 40 * MiB * (1 + HEADROOM_RATIO);
  expect(pacer.tick()).toBe(true);
  expect(heap.collections).toBe(1);
});

test("the headroom counts from what a collection left, the runtime's own collections too", () => {
  const { heap, pacer } = fakeHeap(20 * MiB);
  heap.live = 24 * MiB; // the burst's objects are live now
  heap.size = 30 * MiB;
  expect(pacer.tick()).toBe(true); // 30 ≥ 20 + 10
  heap.size = 24 * MiB + 11 * MiB; // 35 < 24 + 12: not yet
  expect(pacer.tick()).toBe(false);
  heap.size = 12 * MiB; // JavaScriptCore collected on its own: 12 MiB are live
  expect(pacer.tick()).toBe(false);
  heap.size = 12 * MiB + HEADROOM_MIN;
  expect(pacer.tick()).toBe(true);
  expect(heap.collections).toBe(2);
});

test("garbage allocated in steps never grows this process's real heap far past its headroom", () => {
  Bun.gc(true);
  // A small headroom, so that what JavaScriptCore lets pile up on its own (11 MiB here) is far over the bound.
  const headroom = { min: 2 * MiB, ratio: 0.1 };
  const pacer = new HeapPacer(undefined, undefined, headroom);
  const live = heapSize();
  // Two steps may be live at a collection and one more allocated before the next look (~1.2 MiB each).
  const bound = live + Math.max(headroom.min, live * headroom.ratio) + 4 * MiB;
  let highest = 0;
  let kept: unknown[] = [];
  // ~150 MiB of short-lived objects, the pacer looking after each step (as its timer does every 100 ms).
  for (let step = 0; step < 128; step++) {
    kept = Array.from({ length: 8192 }, (_, i) => ({ i, a: step, b: i * 2, c: [i] }));
    highest = Math.max(highest, heapSize());
    pacer.tick();
  }
  expect(kept.length).toBeGreaterThan(0);
  expect(highest).toBeLessThan(bound);
});

test("the pacer is quiet after looks in a row at a heap that did not grow, and a growth or a wake-up starts the count again", () => {
  const { heap, pacer } = fakeHeap(4 * MiB);
  for (let i = 1; i < QUIET_TICKS; i++) pacer.tick();
  expect(pacer.quiet).toBe(false);
  heap.size += QUIET_BYTES; // something allocated
  pacer.tick();
  for (let i = 1; i < QUIET_TICKS; i++) {
    heap.size += QUIET_BYTES - 1; // bookkeeping: no activity
    pacer.tick();
  }
  expect(pacer.quiet).toBe(false);
  pacer.tick();
  expect(pacer.quiet).toBe(true);
  pacer.woken();
  expect(pacer.quiet).toBe(false);
});

test("going quiet, what a burst left below the headroom is collected once it is worth a collection", () => {
  const { heap, pacer } = fakeHeap(4 * MiB);
  heap.size = 4 * MiB + SETTLE_MIN - 1; // under the headroom, and too little to collect for
  pacer.tick();
  expect(pacer.settle()).toBe(false);
  heap.size = 4 * MiB + SETTLE_MIN; // still under the headroom: the ticks leave it
  expect(pacer.tick()).toBe(false);
  expect(pacer.settle()).toBe(true);
  expect(heap.size).toBe(4 * MiB);
  expect(pacer.settle()).toBe(false); // nothing new since
  expect(heap.collections).toBe(1);
});

test("a large heap is collected going quiet only when a burst left a good part of it, not for a few MiB over it", () => {
  const { heap, pacer } = fakeHeap(160 * MiB);
  heap.size = 160 * MiB * (1 + SETTLE_RATIO) - 1; // 20 MiB, past SETTLE_MIN but a small part of the live heap
  pacer.tick();
  expect(pacer.settle()).toBe(false);
  heap.size = 160 * MiB * (1 + SETTLE_RATIO);
  pacer.tick();
  expect(pacer.settle()).toBe(true);
  expect(heap.collections).toBe(1);
});

test("going quiet, the growth counts from the live heap a collection of JavaScriptCore's own left", () => {
  const { heap, pacer } = fakeHeap(8 * MiB);
  heap.live = heap.size = 5 * MiB; // objects went; JavaScriptCore collected them on its own
  expect(pacer.tick()).toBe(false);
  heap.size = 5 * MiB + SETTLE_MIN; // a burst after it, under the headroom
  expect(pacer.tick()).toBe(false);
  expect(pacer.settle()).toBe(true); // 2 MiB of garbage over the 5 live, not over the 8 our collection left
  expect(heap.size).toBe(5 * MiB);
});

test("a pacer going to sleep collects what the burst before left under the headroom", async () => {
  const { heap, pacer } = fakeHeap(4 * MiB);
  heap.size = 4 * MiB + SETTLE_MIN; // the burst's leftover: under HEADROOM_MIN, so no tick collects it
  const stop = new AbortController();
  paceHeap(stop.signal, () => pacer);
  try {
    await eventually(() => !pacerAwake(), "the pacer asleep", 10_000);
    expect(heap.collections).toBe(1);
    expect(heap.size).toBe(4 * MiB);
  } finally {
    stop.abort();
  }
});

test("an idle process's pacer sleeps (no timer), and activity wakes it", async () => {
  const stop = new AbortController();
  paceHeap(stop.signal);
  try {
    expect(pacerAwake()).toBe(true);
    await eventually(() => !pacerAwake(), "the pacer asleep", 10_000);
    heapActivity();
    expect(pacerAwake()).toBe(true);
  } finally {
    stop.abort();
  }
  expect(pacerAwake()).toBe(false);
  heapActivity(); // no pacer: nothing to wake
  expect(pacerAwake()).toBe(false);
});

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

test("an operator paces the heap while it runs, and the pacer stops with the last operator of the process", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "noop" });
  const settings = resolveSettings({ flags: { namespaces: ["pacing"], standalone: true } });
  const stops = [new AbortController(), new AbortController()];
  let started = 0;
  const runs = stops.map((stop) => run({ signal: stop.signal, client: e.client, registry, logger: testLogger().logger, settings, onStarted: () => void started++ }));
  await eventually(() => started === 2, "both operators started", 10_000);
  expect(pacing()).toBe(true);
  stops[0]!.abort();
  await runs[0];
  expect(pacing()).toBe(true);
  stops[1]!.abort();
  await runs[1];
  expect(pacing()).toBe(false);
});

test("an operator's watch events and its client's answers each wake its sleeping pacer", async () => {
  const namespaces: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: false };
  // Another client makes the create: its answer is not the operator's.
  const admin = await KubeClient.connect({ kubeconfig: e.sandbox.kubeconfigPath });
  await admin.create(namespaces, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: "waking" } });
  const registry = new Registry();
  const seen: string[] = [];
  let awakeWhenSeen: boolean | undefined;
  // The filter sees the event and turns it down: the event alone, no request of the operator's.
  const filter = ({ name }: { name: string }) => {
    awakeWhenSeen = pacerAwake();
    seen.push(name);
    return false;
  };
  registry.on.create("v1/configmaps", () => {}, { id: "never", when: filter });
  const settings = resolveSettings({ flags: { namespaces: ["waking"], standalone: true } });
  const stop = new AbortController();
  let started = false;
  const running = run({ signal: stop.signal, client: e.client, registry, logger: testLogger().logger, settings, onStarted: () => void (started = true) });
  try {
    await eventually(() => started, "the operator started", 10_000);
    await eventually(() => !pacerAwake(), "the idle operator's pacer asleep", 15_000);
    await admin.create(CONFIGMAPS, "waking", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "wakes" } });
    await eventually(() => seen.includes("wakes"), "the event filtered", 10_000);
    expect(awakeWhenSeen).toBe(true);
    await eventually(() => !pacerAwake(), "the pacer asleep again", 15_000);
    await e.client.get(namespaces, null, "waking");
    expect(pacerAwake()).toBe(true);
  } finally {
    stop.abort();
    await running;
    admin.close();
  }
});

test("a caller's own pacing ends with its signal", () => {
  const stop = new AbortController();
  paceHeap(stop.signal);
  expect(pacing()).toBe(true);
  stop.abort();
  expect(pacing()).toBe(false);
});
