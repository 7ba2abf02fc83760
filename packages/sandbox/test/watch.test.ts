// WATCH: replay from RV, too-old RV → ERROR 410, synthetic ADDED, bookmarks, initial-events-end,
// timeoutSeconds, selectors (incl. leaving the selector), client abort → openWatches() exact.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api, cm, CM, until, WatchReader } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox({ bookmarkIntervalMs: 50, historySize: 50 }); });
afterAll(async () => { await sb.stop(); });

describe("watch", () => {
  test("from a resourceVersion: only later events, in order; NDJSON over chunked application/json", async () => {
    const before = await api(sb, "POST", CM, cm("w1"));
    const rv = before.body.metadata.resourceVersion;
    await api(sb, "PATCH", `${CM}/w1`, { data: { k: "2" } }, "application/merge-patch+json");
    await api(sb, "DELETE", `${CM}/w1`);
    const w = await WatchReader.open(sb, `${CM}?watch=true&resourceVersion=${rv}`);
    expect(w.res.headers.get("content-type")).toBe("application/json");
    const e1 = await w.next();
    expect(e1.type).toBe("MODIFIED");
    expect(e1.object).toMatchObject({ kind: "ConfigMap", apiVersion: "v1", data: { k: "2" } });
    const e2 = await w.next();
    expect(e2.type).toBe("DELETED");
    expect(Number(e2.object.metadata.resourceVersion)).toBeGreaterThan(Number(e1.object.metadata.resourceVersion));
    await api(sb, "POST", CM, cm("w2"));
    expect((await w.next()).object.metadata.name).toBe("w2");
    w.close();
    await until(() => sb.stats.openWatches() === 0);
  });

  test("too old resourceVersion → one ERROR 410 event, then the stream closes", async () => {
    for (let i = 0; i < 60; i++) await api(sb, "PATCH", `${CM}/w2`, { data: { i: String(i) } }, "application/merge-patch+json");
    const w = await WatchReader.open(sb, `${CM}?watch=1&resourceVersion=2`);
    const line = await w.nextLine();
    const ev = JSON.parse(line!);
    expect(ev).toEqual({
      type: "ERROR",
      object: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: expect.stringMatching(/^too old resource version: 2 \(\d+\)$/), reason: "Expired", code: 410 },
    });
    expect(await w.next()).toBeUndefined();
    expect(w.ended).toBe(true);
    expect(sb.stats.openWatches()).toBe(0);
  });

  test("no resourceVersion (or 0): synthetic ADDED for existing objects, then changes", async () => {
    const w = await WatchReader.open(sb, `${CM}?watch=true&resourceVersion=0`);
    const first = await w.next();
    expect(first).toMatchObject({ type: "ADDED", object: { metadata: { name: "w2" } } });
    await api(sb, "POST", CM, cm("w3"));
    expect(await w.next()).toMatchObject({ type: "ADDED", object: { metadata: { name: "w3" } } });
    w.close();
  });

  test("allowWatchBookmarks: periodic BOOKMARK with the current resourceVersion", async () => {
    const w = await WatchReader.open(sb, `${CM}?watch=true&allowWatchBookmarks=true&resourceVersion=${sb.store.resourceVersion()}`);
    const b = await w.next();
    expect(b).toEqual({ type: "BOOKMARK", object: { kind: "ConfigMap", apiVersion: "v1", metadata: { resourceVersion: sb.store.resourceVersion() } } });
    w.close();
    // timeoutSeconds is an integer (strconv.ParseInt), as on a real server
    const nob = await WatchReader.open(sb, `${CM}?watch=true&resourceVersion=${sb.store.resourceVersion()}&timeoutSeconds=1`);
    expect(await nob.next()).toBeUndefined();
  });

  test("sendInitialEvents: ADDED for all, then BOOKMARK with k8s.io/initial-events-end", async () => {
    const bad = await api(sb, "GET", `${CM}?watch=true&sendInitialEvents=true`);
    expect(bad.status).toBe(422);
    const w = await WatchReader.open(sb, `${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
    const names: string[] = [];
    let ev = await w.next();
    while (ev.type === "ADDED") { names.push(ev.object.metadata.name); ev = await w.next(); }
    expect(names).toEqual(["w2", "w3"]);
    expect(ev.type).toBe("BOOKMARK");
    expect(ev.object.metadata.annotations).toEqual({ "k8s.io/initial-events-end": "true" });
    expect(ev.object.metadata.resourceVersion).toBe(sb.store.resourceVersion());
    w.close();
  });

  test("timeoutSeconds: the server ends the stream cleanly", async () => {
    const t0 = Date.now();
    const w = await WatchReader.open(sb, `${CM}?watch=true&resourceVersion=${sb.store.resourceVersion()}&timeoutSeconds=1`);
    expect(await w.next(3000)).toBeUndefined();
    expect(w.ended).toBe(true);
    expect(w.errored).toBeUndefined();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(sb.stats.openWatches()).toBe(0);
  });

  test("label selector: entering → ADDED, changing → MODIFIED, leaving → DELETED; namespace scoping", async () => {
    await api(sb, "POST", "/api/v1/namespaces", { metadata: { name: "ws" } });
    const w = await WatchReader.open(sb, `${CM}?watch=true&labelSelector=sel%3Dyes&resourceVersion=${sb.store.resourceVersion()}`);
    await api(sb, "POST", "/api/v1/namespaces/ws/configmaps", cm("elsewhere", { sel: "yes" }));
    await api(sb, "POST", CM, cm("s1"));
    await api(sb, "PATCH", `${CM}/s1`, { metadata: { labels: { sel: "yes" } } }, "application/merge-patch+json");
    await api(sb, "PATCH", `${CM}/s1`, { data: { k: "x" } }, "application/merge-patch+json");
    await api(sb, "PATCH", `${CM}/s1`, { metadata: { labels: { sel: null } } }, "application/merge-patch+json");
    expect((await w.next()).type).toBe("ADDED");
    expect((await w.next()).type).toBe("MODIFIED");
    const gone = await w.next();
    expect(gone.type).toBe("DELETED");
    expect(gone.object.metadata.name).toBe("s1");
    w.close();
    const f = await WatchReader.open(sb, `/api/v1/configmaps?watch=true&fieldSelector=metadata.namespace%3Dws`);
    expect((await f.next()).object.metadata.name).toBe("elsewhere");
    f.close();
  });

  test("client abort: openWatches() returns to 0", async () => {
    const ws = await Promise.all([1, 2, 3].map(() => WatchReader.open(sb, `${CM}?watch=true&resourceVersion=${sb.store.resourceVersion()}`)));
    expect(sb.stats.openWatches()).toBe(3);
    expect(sb.stats.requests("watch")).toBeGreaterThan(3);
    for (const w of ws) w.close();
    await until(() => sb.stats.openWatches() === 0, 1000);
    expect(sb.stats.openWatches()).toBe(0);
  });

  test("waitFor resolves on the next matching request", async () => {
    const seen = sb.waitFor((r) => r.verb === "get" && r.path.endsWith("/w3"), 2000);
    await api(sb, "GET", `${CM}/w3`);
    await seen;
    await expect(sb.waitFor((r) => r.verb === "nothing", 30)).rejects.toThrow();
  });
});
