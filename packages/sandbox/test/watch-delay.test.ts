// faults.delayWatches: watch events (and bookmarks) reach open watches late and in order, while
// writes and LISTs answer at once; off after reset; nothing held back or armed once streams end.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api, cm, CM, until, WatchReader } from "./helpers.ts";

const SECRETS = "/api/v1/namespaces/default/secrets";

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox({ bookmarkIntervalMs: 20 }); });
afterEach(() => sb.faults.reset());
afterAll(async () => { await sb.stop(); });

const watch = (path: string, query = "") =>
  WatchReader.open(sb, `${path}?watch=true&resourceVersion=${sb.store.resourceVersion()}${query}`);
const rvOf = (ev: any) => Number(ev.object.metadata.resourceVersion);

describe("delayWatches", () => {
  test("a write answers at once with its resourceVersion; the open watch shows it only ms later", async () => {
    const w = await watch(CM);
    sb.faults.delayWatches(300, { plural: "configmaps" });
    const t0 = performance.now();
    const created = await api(sb, "POST", CM, cm("d1"));
    expect(created.status).toBe(201);
    // answered while its event is still held back: the watch is stale, the write is not
    expect(sb.faults.pendingDelayed()).toEqual({ lines: 1, timers: 1 });
    const listed = await api(sb, "GET", CM); // LIST is not delayed either
    expect(listed.body.items.map((o: any) => o.metadata.name)).toContain("d1");
    const ev = await w.nextChange(5000);
    const waited = performance.now() - t0;
    expect(ev).toMatchObject({ type: "ADDED", object: { metadata: { name: "d1" } } });
    expect(rvOf(ev)).toBe(Number(created.body.metadata.resourceVersion));
    expect(waited).toBeGreaterThanOrEqual(300);
    expect(waited).toBeLessThan(3300);
    expect(sb.faults.pendingDelayed()).toEqual({ lines: 0, timers: 0 });
    w.close();
  });

  test("events keep their order, also when the delay is turned off while some are held back", async () => {
    const w = await watch(CM);
    sb.faults.delayWatches(150);
    await api(sb, "POST", CM, cm("o1"));
    await api(sb, "POST", CM, cm("o2"));
    await api(sb, "PUT", `${CM}/o1`, cm("o1", {}, { k: "changed" }));
    await api(sb, "DELETE", `${CM}/o2`);
    sb.faults.delayWatches(0); // o3 is not held, but must not overtake what is
    await api(sb, "POST", CM, cm("o3"));
    const seen: string[] = [];
    let last = 0;
    for (let i = 0; i < 5; i++) {
      const ev = await w.nextChange(5000);
      seen.push(`${ev.type} ${ev.object.metadata.name}`);
      expect(rvOf(ev)).toBeGreaterThan(last);
      last = rvOf(ev);
    }
    expect(seen).toEqual(["ADDED o1", "ADDED o2", "MODIFIED o1", "DELETED o2", "ADDED o3"]);
    w.close();
  });

  test("bookmarks are held back too: none overtakes an event", async () => {
    sb.faults.delayWatches(1000);
    const t0 = performance.now();
    // the response head is not held back (a newline commits it), or the client's fetch would wait
    const w = await watch(CM, "&allowWatchBookmarks=true");
    expect(performance.now() - t0).toBeLessThan(1000);
    await until(() => sb.faults.pendingDelayed().lines >= 2); // bookmarks held back before the write
    const created = rvOf({ object: (await api(sb, "POST", CM, cm("b1"))).body });
    let ev = await w.next(5000);
    let bookmarksBefore = 0;
    while (ev.type === "BOOKMARK") {
      expect(rvOf(ev)).toBeLessThan(created);
      bookmarksBefore++;
      ev = await w.next(5000);
    }
    expect(ev).toMatchObject({ type: "ADDED", object: { metadata: { name: "b1" } } });
    // bookmarks kept coming while the event was held, each one behind it
    const after = await w.next(5000);
    expect(after.type).toBe("BOOKMARK");
    expect(rvOf(after)).toBeGreaterThanOrEqual(created);
    expect(bookmarksBefore).toBeGreaterThan(0);
    w.close();
  });

  test("only the matching plural (and namespace) is delayed", async () => {
    const [cms, secrets] = await Promise.all([watch(CM), watch(SECRETS)]);
    sb.faults.delayWatches(1000, { plural: "configmaps" });
    const t0 = performance.now();
    await api(sb, "POST", CM, cm("p1"));
    await api(sb, "POST", SECRETS, { apiVersion: "v1", kind: "Secret", metadata: { name: "s1" } });
    expect((await secrets.nextChange(5000)).object.metadata.name).toBe("s1");
    expect(sb.faults.pendingDelayed().lines).toBe(1); // the secret went by while p1 is still held
    expect((await cms.nextChange(5000)).object.metadata.name).toBe("p1");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1000);
    cms.close();
    secrets.close();

    const all = await watch("/api/v1/configmaps");
    const inDefault = await watch(CM);
    sb.faults.delayWatches(1000, { namespace: "kube-system" });
    await api(sb, "POST", "/api/v1/namespaces/kube-system/configmaps", cm("n1"));
    await api(sb, "POST", CM, cm("n2"));
    expect((await inDefault.nextChange(5000)).object.metadata.name).toBe("n2");
    expect(sb.faults.pendingDelayed().lines).toBeGreaterThanOrEqual(1);
    // on a watch of all namespaces, n2 is not held itself but waits behind n1
    expect((await all.nextChange(5000)).object.metadata.name).toBe("n1");
    expect((await all.nextChange(5000)).object.metadata.name).toBe("n2");
    all.close();
    inDefault.close();
  });

  test("off after reset(): nothing is held back", async () => {
    const w = await watch(CM);
    sb.faults.delayWatches(60_000);
    sb.faults.reset();
    await api(sb, "POST", CM, cm("r1"));
    expect(sb.faults.pendingDelayed()).toEqual({ lines: 0, timers: 0 });
    expect((await w.nextChange(5000)).object.metadata.name).toBe("r1");
    w.close();
  });

  test("a delay that is no number of ms (NaN, negative, a string) is refused, not taken for off", () => {
    // taken for 0 before: a test computing its delay wrongly ran with fresh watches and passed as a stale-read test
    for (const ms of [Number.NaN, -300, "300", Number.POSITIVE_INFINITY]) {
      expect(() => sb.faults.delayWatches(ms as number)).toThrow(
        `faults.delayWatches(${typeof ms === "string" ? JSON.stringify(ms) : String(ms)}): the delay is a number of ms, ` +
          "0 or more (0 turns it off)",
      );
    }
    expect(() => sb.faults.delayWatches(0)).not.toThrow();
  });

  test("delays count in a given time: a held line leaves only when that time's timer fires", async () => {
    let now = 1_000;
    const timers: { ms: number; fire: () => void }[] = [];
    sb.faults.delayTime({ now: () => now, timer: (ms, fire) => (timers.push({ ms, fire }), () => {}) });
    try {
      const w = await watch(CM);
      sb.faults.delayWatches(60_000, { plural: "configmaps" });
      await api(sb, "POST", CM, cm("t1"));
      expect(timers.map((t) => t.ms)).toEqual([60_000]); // armed in the given time, not the machine's
      expect(sb.faults.pendingDelayed()).toEqual({ lines: 1, timers: 1 });
      now += 60_000;
      timers.shift()!.fire();
      expect((await w.nextChange(5000)).object.metadata.name).toBe("t1");
      expect(sb.faults.pendingDelayed()).toEqual({ lines: 0, timers: 0 });
      w.close();
    } finally {
      sb.faults.delayTime(); // the machine's again
    }
  });

  test("a stream that ends meanwhile gets nothing more, and leaves no timer", async () => {
    sb.faults.delayWatches(60_000);
    const ending = await watch(CM, "&timeoutSeconds=1");
    const leaving = await watch(CM);
    await api(sb, "POST", CM, cm("e1"));
    expect(sb.faults.pendingDelayed()).toEqual({ lines: 2, timers: 2 });
    leaving.close();
    await until(() => sb.faults.pendingDelayed().lines === 1, 5000);
    expect(await ending.next(5000)).toBeUndefined(); // the server's timeout: a clean end, without e1
    expect(ending.errored).toBeUndefined();
    expect(sb.faults.pendingDelayed()).toEqual({ lines: 0, timers: 0 });
  });
});

test("stopping the sandbox with events held back leaves no timer", async () => {
  const own = await startSandbox();
  const w = await WatchReader.open(own, `${CM}?watch=true&resourceVersion=${own.store.resourceVersion()}`);
  own.faults.delayWatches(60_000);
  await api(own, "POST", CM, cm("s1"));
  await api(own, "POST", CM, cm("s2"));
  expect(own.faults.pendingDelayed()).toEqual({ lines: 2, timers: 1 });
  await own.stop();
  expect(own.faults.pendingDelayed()).toEqual({ lines: 0, timers: 0 });
  expect(await w.next(5000)).toBeUndefined(); // the stream ended without the held events
});
