// Every fault: expireWatches, compact, sendError, sendUnknownEvent, sendMalformedLine,
// dropWatches, stallWatches, failNext (with Retry-After).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api, cm, CM, until, WatchReader } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox({ bookmarkIntervalMs: 40 }); });
afterAll(async () => { await sb.stop(); });

const open = () => WatchReader.open(sb, `${CM}?watch=true&resourceVersion=${sb.store.resourceVersion()}`);

describe("faults", () => {
  test("expireWatches: ERROR 410 Expired then clean close, on every open watch", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    expect(sb.stats.openWatches()).toBe(2);
    sb.faults.expireWatches();
    for (const w of [a, b]) {
      const ev = await w.next();
      expect(ev.type).toBe("ERROR");
      expect(ev.object).toMatchObject({ kind: "Status", status: "Failure", reason: "Expired", code: 410 });
      expect(await w.next()).toBeUndefined();
      expect(w.errored).toBeUndefined();
    }
    expect(sb.stats.openWatches()).toBe(0);
  });

  test("compact: a watch from an older resourceVersion gets ERROR 410", async () => {
    const rv = (await api(sb, "POST", CM, cm("f1"))).body.metadata.resourceVersion;
    sb.faults.compact();
    const w = await WatchReader.open(sb, `${CM}?watch=true&resourceVersion=${rv}`);
    const ev = await w.next();
    expect(ev.object.code).toBe(410);
    expect(ev.object.message).toMatch(new RegExp(`^too old resource version: ${rv} \\(\\d+\\)$`));
    expect(await w.next()).toBeUndefined();
    const fresh = await WatchReader.open(sb, `${CM}?watch=true&resourceVersion=${sb.store.resourceVersion()}`);
    await api(sb, "POST", CM, cm("f2"));
    expect((await fresh.next()).type).toBe("ADDED");
    fresh.close();
  });

  test("sendError, sendUnknownEvent, sendMalformedLine: delivered in order, stream stays open", async () => {
    const w = await open();
    sb.faults.sendError(500, "InternalError", "boom");
    sb.faults.sendUnknownEvent("FUTURE");
    sb.faults.sendMalformedLine("{not json");
    await api(sb, "POST", CM, cm("f3"));
    expect(await w.next()).toEqual({ type: "ERROR", object: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "boom", reason: "InternalError", code: 500 } });
    expect((await w.next()).type).toBe("FUTURE");
    expect(await w.nextLine()).toBe("{not json");
    expect((await w.next()).object.metadata.name).toBe("f3");
    expect(sb.stats.openWatches()).toBe(1);
    w.close();
    await until(() => sb.stats.openWatches() === 0);
  });

  test("dropWatches: connections cut without a clean end", async () => {
    const w = await open();
    sb.faults.dropWatches();
    expect(sb.stats.openWatches()).toBe(0);
    expect(await w.next()).toBeUndefined();
    expect(w.errored).toBeDefined();
  });

  test("stallWatches: nothing (not even bookmarks) during the stall; queued events after", async () => {
    const w = await WatchReader.open(sb, `${CM}?watch=true&allowWatchBookmarks=true&resourceVersion=${sb.store.resourceVersion()}`);
    expect((await w.next()).type).toBe("BOOKMARK");
    sb.faults.stallWatches(300);
    const t0 = Date.now();
    const created = Number((await api(sb, "POST", CM, cm("f4"))).body.metadata.resourceVersion);
    // Bookmarks the server wrote before the stall may still be unread, however many a loaded
    // machine let pile up; they carry an older resourceVersion. A bookmark written during the
    // stall (or after it, ahead of the queued event) would carry f4's.
    let ev = await w.next(2000);
    while (ev?.type === "BOOKMARK") {
      expect(Number(ev.object.metadata.resourceVersion)).toBeLessThan(created);
      ev = await w.next(2000);
    }
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(ev).toMatchObject({ type: "ADDED", object: { metadata: { name: "f4" } } });
    w.close();
  });

  test("stallWatches: a line sent after the stall's deadline but before its late timer waits behind the queued ones", async () => {
    const w = await open();
    sb.faults.stallWatches(50);
    sb.faults.sendUnknownEvent("QUEUED");
    // Block the event loop past the deadline, as a loaded machine does: the timer that ends the
    // stall cannot run yet, so the next line must still go behind the queued one.
    const deadline = Date.now() + 100;
    while (Date.now() < deadline) { /* busy */ }
    sb.faults.sendUnknownEvent("LATE");
    expect((await w.nextChange()).type).toBe("QUEUED");
    expect((await w.nextChange()).type).toBe("LATE");
    w.close();
  });

  test("failNext: n matching requests get a real Status; 429 carries Retry-After", async () => {
    sb.faults.failNext(2, 429, { verb: "list", plural: "configmaps", retryAfterSeconds: 3 });
    const other = await api(sb, "GET", "/api/v1/namespaces");
    expect(other.status).toBe(200);
    const r1 = await api(sb, "GET", CM);
    expect(r1.status).toBe(429);
    expect(r1.headers.get("retry-after")).toBe("3");
    expect(r1.body).toMatchObject({ kind: "Status", status: "Failure", reason: "TooManyRequests", code: 429, details: { retryAfterSeconds: 3 } });
    expect((await api(sb, "GET", CM)).status).toBe(429);
    expect((await api(sb, "GET", CM)).status).toBe(200);
    sb.faults.failNext(1, 503);
    const r3 = await api(sb, "GET", `${CM}/f4`);
    expect(r3.status).toBe(503);
    expect(r3.body.reason).toBe("ServiceUnavailable");
    sb.faults.failNext(1, 500, { verb: "watch" });
    expect((await api(sb, "GET", `${CM}?watch=true`)).status).toBe(500);
    sb.faults.failNext(1, 410, { verb: "patch" });
    expect((await api(sb, "PATCH", `${CM}/f4`, {}, "application/merge-patch+json")).body.reason).toBe("Expired");
  });

  test("stats: counts by verb and plural; reset", async () => {
    sb.stats.reset();
    await api(sb, "GET", CM);
    await api(sb, "GET", "/api/v1/namespaces");
    expect(sb.stats.requests()).toBe(2);
    expect(sb.stats.requests("list")).toBe(2);
    expect(sb.stats.requests("list", { plural: "configmaps" })).toBe(1);
    expect(sb.stats.log[0]).toMatchObject({ verb: "list", method: "GET", path: CM, query: "" });
  });
});

test("stallNext leaves the next matching request unanswered for a while", async () => {
  const sb = await startSandbox();
  try {
    // a stall far longer than a loaded machine's slowest answer, so "not stalled" has room to be told apart
    sb.faults.stallNext(1, 2000, { verb: "list", plural: "configmaps" });
    const t0 = performance.now();
    const first = await fetch(`${sb.url}/api/v1/namespaces/default/configmaps`);
    const stalled = performance.now() - t0;
    expect(first.status).toBe(200);
    expect(stalled).toBeGreaterThanOrEqual(1990);
    const t1 = performance.now();
    await fetch(`${sb.url}/api/v1/namespaces/default/configmaps`);
    expect(performance.now() - t1).toBeLessThan(1000); // only the next one
  } finally {
    await sb.stop();
  }
}, 15_000);

test("stallNext for one client, after skipping some; unserved: a request its client gave up on is never made", async () => {
  const sb = await startSandbox();
  try {
    const post = (who: string, name: string, signal?: AbortSignal) => fetch(`${sb.url}/api/v1/namespaces/default/configmaps`, {
      method: "POST", signal, headers: { "content-type": "application/json", "impersonate-user": who },
      body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name } }),
    });
    sb.faults.stallNext(1, 1500, { client: "op-", verb: "create", plural: "configmaps", skip: 1, unserved: true });
    expect((await post("someone", "other")).status).toBe(201); // another client: not held
    expect((await post("op-1", "first")).status).toBe(201); // skipped
    const started = performance.now();
    const gaveUp = await post("op-1", "held", AbortSignal.timeout(200)).catch((error: Error) => error.name);
    expect(gaveUp).toBe("TimeoutError");
    // Nothing tells of a request never served: look once the stall would have ended.
    await Bun.sleep(Math.max(0, 1700 - (performance.now() - started)));
    expect(sb.store.get("", "configmaps", "default", "held")).toBeUndefined();
    expect((await post("op-1", "after")).status).toBe(201); // the rule is spent
  } finally {
    await sb.stop();
  }
}, 15_000);
