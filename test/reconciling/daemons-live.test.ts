// Daemons as Kopf's (issue 33), against the sandbox: a daemon's ctx.patch and result are written
// after each exit (a restart's too); its ctx.body/spec are live (the newest state the watch saw);
// cancellationBackoff separates being asked to stop (ctx.stopped) from being made to (ctx.signal).

import { afterEach, expect, test } from "bun:test";
import { Registry, TemporaryError } from "../../src/declaring/index.ts";
import { startHarness, type Harness } from "../handling/harness.ts";
import { eventually } from "../runtime/helpers.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const aborted = (signal: AbortSignal) => new Promise<void>((resolve) => {
  if (signal.aborted) return resolve();
  signal.addEventListener("abort", () => resolve(), { once: true });
});

test("a daemon's patch is written after each exit, a restart's too, and its result goes to status.<id>", async () => {
  const registry = new Registry();
  registry.on.daemon("kobunexamples.kobun.dev/v1", ({ patch, retry }) => {
    patch.status.attempts = retry + 1;
    patch.metadata.annotations = { [`seen/${retry}`]: "yes" };
    h?.poke();
    if (retry < 2) throw new TemporaryError("again", { delay: 0 });
    return { done: true };
  }, { id: "counter", finalizer: false });
  h = await startHarness({ registry });
  await h.create("p", {});
  // The result goes to /status before the patch's metadata part: wait for both.
  await h.until(() => h!.get("p")?.status?.counter?.done === true && h!.get("p").metadata.annotations?.["seen/2"]);
  const body = h.get("p");
  expect(body.status.attempts).toBe(3);
  // Each attempt's own patch landed: the restarts' annotations are there beside the last one's.
  expect(body.metadata.annotations).toMatchObject({ "seen/0": "yes", "seen/1": "yes", "seen/2": "yes" });
});

test("a daemon's ctx.body and ctx.spec are live: they follow the object's changes; a destructured spec stays a snapshot", async () => {
  const registry = new Registry();
  const seen: { live: number; snapshot: number; body: number }[] = [];
  const running = Promise.withResolvers<void>();
  registry.on.daemon("kobunexamples.kobun.dev/v1", async (ctx) => {
    const { spec } = ctx; // a snapshot, as documented
    const started = ctx.spec.size;
    running.resolve();
    while (ctx.spec.size === started && !ctx.signal.aborted) await Bun.sleep(10);
    seen.push({ live: ctx.spec.size, snapshot: spec.size, body: ctx.body.spec!.size });
    h?.poke();
  }, { id: "follower", finalizer: false });
  h = await startHarness({ registry });
  await h.create("l", { size: 1 });
  await running.promise;
  await h.client.patch(h.resource, "default", "l", { spec: { size: 2 } });
  await h.until(() => seen.length === 1);
  expect(seen).toEqual([{ live: 2, snapshot: 1, body: 2 }]);
});

test("cancellationBackoff: ctx.stopped aborts at once, ctx.signal that much later; a daemon that returns meanwhile has its patch written", async () => {
  const registry = new Registry();
  const times: Record<string, number> = {};
  const graceful = Promise.withResolvers<void>();
  const slow = Promise.withResolvers<void>();
  registry.on.daemon("kobunexamples.kobun.dev/v1", async ({ stopped, signal, patch }) => {
    graceful.resolve();
    signal.addEventListener("abort", () => (times.signal = Date.now()), { once: true });
    await aborted(stopped);
    times.stopped = Date.now();
    times.signalAbortedWhenStopped = Number(signal.aborted);
    patch.status.farewell = "said"; // written: it returned before its signal aborted
  }, { id: "graceful", labels: { daemon: "yes" }, finalizer: false, cancellationBackoff: 0.3 });
  registry.on.daemon("kobunexamples.kobun.dev/v1", async ({ stopped, signal }) => {
    slow.resolve();
    await aborted(stopped);
    times.slowStopped = Date.now();
    await aborted(signal); // goes on until it is made to stop
    times.slowSignal = Date.now();
    h?.poke();
  }, { id: "slow", labels: { daemon: "yes" }, finalizer: false, cancellationBackoff: 0.3 });
  h = await startHarness({ registry });
  await h.create("c", {}, { labels: { daemon: "yes" } });
  await Promise.all([graceful.promise, slow.promise]);
  await h.client.patch(h.resource, "default", "c", { metadata: { labels: { daemon: null } } });
  await h.until(() => h!.get("c")?.status?.farewell === "said" && times.slowSignal !== undefined, 5000);
  expect(times.signalAbortedWhenStopped).toBe(0);
  expect(times.slowSignal! - times.slowStopped!).toBeGreaterThanOrEqual(290);
});

test("a daemon's errors and retries options follow the handler rules: retries bounds the restarts, errors: permanent stops at once", async () => {
  const registry = new Registry();
  const runs: string[] = [];
  registry.on.daemon("kobunexamples.kobun.dev/v1", ({ retry }) => {
    runs.push(`bounded:${retry}`);
    h?.poke();
    throw new Error("always");
  }, { id: "bounded", backoff: 0.01, retries: 2, finalizer: false });
  registry.on.daemon("kobunexamples.kobun.dev/v1", ({ retry }) => {
    runs.push(`strict:${retry}`);
    h?.poke();
    throw new Error("once is enough");
  }, { id: "strict", backoff: 0.01, errors: "permanent", finalizer: false });
  h = await startHarness({ registry });
  await h.create("e", {});
  const uid = () => h!.get("e")?.metadata.uid ?? "";
  // A phase is no event to await: polled, bounded.
  await eventually(() => {
    const phases = h!.processor.backgroundPhases(uid());
    return phases.bounded === "finished" && phases.strict === "finished";
  }, "both daemons finished");
  expect(runs.sort()).toEqual(["bounded:0", "bounded:1", "strict:0"]);
});
