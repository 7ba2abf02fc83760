// Daemons and timers against the sandbox (issue 13): one per matching object, stopped on
// deletion and on unmatching, holding the finalizer until they have stopped; a timer's results
// go to status like a handler's; a deletion during a timer call aborts it, then the delete
// handlers run exactly once (Kopf #882 ran them twice).

import { afterEach, expect, test } from "bun:test";
import { FINALIZER } from "../../src/declaring/keys.ts";
import { PermanentError, Registry } from "../../src/declaring/index.ts";
import { MetricsRegistry } from "../../src/observability/metrics.ts";
import { reconcileMetrics } from "../../src/runtime/metrics.ts";
import { Logger, memorySink } from "../../src/util/log.ts";
import { startHarness, type Harness } from "../handling/harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

// Already aborted counts: the operator may see a deletion and stop the daemon before the
// test's DELETE call has returned, and an abort event that has fired never fires again.
const aborted = (signal: AbortSignal) => new Promise<void>((resolve) => {
  if (signal.aborted) return resolve();
  signal.addEventListener("abort", () => resolve(), { once: true });
});
const remove = (name: string) => h!.client.delete(h!.resource, "default", name);

test("a daemon runs once per matching object, holds the finalizer, and a deletion waits until it has stopped", async () => {
  const registry = new Registry();
  const starts: string[] = [];
  const signals = new Map<string, AbortSignal>();
  let stoppedAt = 0;
  registry.on.daemon("kobunexamples.kobun.dev/v1", async ({ name, signal }) => {
    starts.push(name);
    signals.set(name, signal);
    h?.poke();
    await aborted(signal);
    await Bun.sleep(100); // its own cleanup after the stop: the object must wait for it
    stoppedAt = Date.now();
  }, { id: "watcher", labels: { daemon: "yes" } });
  h = await startHarness({ registry });
  await h.create("one", {}, { labels: { daemon: "yes" } });
  await h.create("other", {});
  await h.until(() => starts.includes("one") && h!.get("one")?.metadata.finalizers?.includes(FINALIZER));
  expect(starts).toEqual(["one"]);
  expect(h.get("other").metadata.finalizers ?? []).not.toContain(FINALIZER);
  expect(h.processor.backgroundPhases(h.get("one").metadata.uid)).toEqual({ watcher: "running" });

  await remove("one");
  await aborted(signals.get("one")!);
  // Aborted, but still stopping: the object is held by the finalizer meanwhile.
  expect(h.get("one")?.metadata.deletionTimestamp).toBeDefined();
  await h.until(() => h!.get("one") === undefined, 5000);
  expect(stoppedAt).toBeGreaterThan(0);
  expect(starts).toEqual(["one"]);
});

test("a daemon stops when its object stops matching, one that returns is not restarted, one that throws is restarted after its backoff", async () => {
  const registry = new Registry();
  const log: string[] = [];
  registry.on.daemon("kobunexamples.kobun.dev/v1", async ({ signal }) => {
    log.push("labelled:start");
    await aborted(signal);
    log.push("labelled:stopped");
    h?.poke();
  }, { id: "labelled", labels: { daemon: "yes" }, finalizer: false });
  registry.on.daemon("kobunexamples.kobun.dev/v1", async () => {
    log.push("once");
    h?.poke();
  }, { id: "once", finalizer: false });
  let throws = 0;
  registry.on.daemon("kobunexamples.kobun.dev/v1", async ({ retry }) => {
    log.push(`flaky:${retry}`);
    h?.poke();
    if (++throws <= 2) throw new Error("not yet");
    if (throws === 3) throw new PermanentError("never again");
  }, { id: "flaky", backoff: 0.05, finalizer: false });
  h = await startHarness({ registry });
  await h.create("a", {}, { labels: { daemon: "yes" } });
  await h.until(() => log.includes("labelled:start") && log.includes("flaky:2"));
  await h.client.patch(h.resource, "default", "a", { metadata: { labels: { daemon: null } } });
  await h.until(() => log.includes("labelled:stopped"));
  // Another change: nothing restarts (the one that returned, the one that failed for good).
  await h.client.patch(h.resource, "default", "a", { spec: { touched: true } });
  await h.until(() => h!.get("a")?.spec?.touched);
  await h.processor.settled();
  expect(log.filter((l) => l === "once")).toHaveLength(1);
  expect(log.filter((l) => l.startsWith("flaky"))).toEqual(["flaky:0", "flaky:1", "flaky:2"]);
  expect(h.processor.backgroundPhases(h.get("a").metadata.uid)).toEqual({ once: "finished", flaky: "finished" });
});

test("a daemon that ignores its signal is abandoned after its cancellationTimeout and named in a warning; the deletion then goes on", async () => {
  const registry = new Registry();
  const started = deferred();
  registry.on.daemon("kobunexamples.kobun.dev/v1", async () => {
    started.resolve();
    await Bun.sleep(3000); // deaf to its signal: what is under test
  }, { id: "deaf", cancellationTimeout: 0.2 });
  const sink = memorySink("debug");
  const metrics = new MetricsRegistry();
  h = await startHarness({ registry, processor: { logger: new Logger(sink), observers: { cycles: reconcileMetrics(metrics, "kobunexamples.kobun.dev", 1) } } });
  await h.create("deaf", {});
  await started.promise;
  await h.until(() => h!.get("deaf")?.metadata.finalizers?.includes(FINALIZER));
  const deletedAt = Date.now();
  await remove("deaf");
  await h.until(() => h!.get("deaf") === undefined, 5000);
  expect(Date.now() - deletedAt).toBeLessThan(2500);
  const warning = sink.lines.find((l) => l.includes("abandoned a daemon"));
  expect(warning).toContain("daemon=deaf");
  expect(warning).toContain("name=deaf");
  expect(metrics.expose()).toContain("\nkobun_background_abandoned_total 1\n");
});

test("a timer's result goes to status.<id> and its patch to the object, every interval", async () => {
  const registry = new Registry();
  let calls = 0;
  registry.on.timer("kobunexamples.kobun.dev/v1", ({ patch }) => {
    calls++;
    patch.status.ticks = calls;
    h?.poke();
    return { calls };
  }, { id: "tick", interval: 0.05 });
  h = await startHarness({ registry });
  await h.create("t", {});
  await h.until(() => (h!.get("t")?.status?.tick?.calls ?? 0) >= 3);
  expect(h.get("t").status.ticks).toBeGreaterThanOrEqual(3);
});

test("a timer that throws is retried after its backoff, with ctx.retry counting", async () => {
  const registry = new Registry();
  const retries: number[] = [];
  registry.on.timer("kobunexamples.kobun.dev/v1", ({ retry }) => {
    retries.push(retry);
    h?.poke();
    if (retry < 2) throw new Error("flaky");
    return "ok";
  }, { id: "flaky", interval: 60, backoff: 0.05 });
  h = await startHarness({ registry });
  await h.create("f", {});
  await h.until(() => h!.get("f")?.status?.flaky === "ok");
  expect(retries).toEqual([0, 1, 2]);
});

test("a deletion during a timer call aborts the call, then the delete handlers run exactly once, and the object goes", async () => {
  const registry = new Registry();
  const order: string[] = [];
  const inCall = deferred<AbortSignal>();
  registry.on.timer("kobunexamples.kobun.dev/v1", async ({ signal, patch }) => {
    order.push("timer");
    inCall.resolve(signal);
    await aborted(signal);
    order.push("timer:aborted");
    patch.status.late = true; // never written: the call was aborted
  }, { id: "slow", interval: 0.02 });
  registry.on.delete("kobunexamples.kobun.dev/v1", async () => {
    order.push("delete");
    await Bun.sleep(50);
  }, { id: "cleanup" });
  h = await startHarness({ registry });
  await h.create("d", {});
  await inCall.promise;
  await h.until(() => h!.get("d")?.metadata.finalizers?.includes(FINALIZER));
  await remove("d");
  await h.until(() => h!.get("d") === undefined, 5000);
  await h.processor.settled();
  expect(order).toEqual(["timer", "timer:aborted", "delete"]);
});

test("a shard handed over aborts the daemons on it, and its hold is released only once they have stopped", async () => {
  const registry = new Registry();
  const started = deferred<AbortSignal>();
  let stopped = false;
  registry.on.daemon("kobunexamples.kobun.dev/v1", async ({ signal }) => {
    started.resolve(signal);
    await aborted(signal);
    await Bun.sleep(50);
    stopped = true;
  }, { id: "sharded", finalizer: false });
  const shard = new AbortController();
  let held = 0;
  const released = deferred<boolean>();
  const hold = () => {
    held++;
    let exited = false;
    return { signal: shard.signal, exit: () => { if (!exited && --held === 0) released.resolve(stopped); exited = true; } };
  };
  h = await startHarness({ registry, processor: { ownership: { hold } } });
  await h.create("s", {});
  const signal = await started.promise;
  await h.processor.settled();
  shard.abort();
  expect(signal.aborted).toBe(true);
  // Cycles exit their holds at once; the daemon's is the last, after it stopped.
  expect(await released.promise).toBe(true);
});
