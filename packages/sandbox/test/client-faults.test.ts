// faults.clients (one client, told by its Impersonate-User header, cut off as a killed process,
// its writes heard as they commit, chosen writes failed) and faults.mergeWatches (only the
// latest state of each object delivered, once released).
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import type { WriteRecord } from "../src/client-faults.ts";
import { cm, CM, WatchReader } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox({ bookmarkIntervalMs: 60_000 }); });
afterEach(() => sb.faults.reset());
afterAll(async () => { await sb.stop(); });

/** a request as the client `who` (Impersonate-User), its status and JSON body */
async function as(who: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { "impersonate-user": who };
  if (body !== undefined) headers["content-type"] = method === "PATCH" ? "application/merge-patch+json" : "application/json";
  const res = await fetch(sb.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe("clients", () => {
  test("onWrite hears each committed write with its client, verb, resource and name; reads are not writes", async () => {
    const heard: WriteRecord[] = [];
    const stop = sb.faults.clients.onWrite((w) => heard.push(w));
    await as("op-1", "POST", CM, cm("heard"));
    await as("op-1", "GET", `${CM}/heard`);
    await as("op-2", "PATCH", `${CM}/heard`, { data: { k: "w" } });
    await as("op-2", "POST", CM, { ...cm(""), metadata: { generateName: "gen-" } });
    await as("op-1", "DELETE", `${CM}/heard`);
    const applied = await fetch(`${sb.url}${CM}/ssa?fieldManager=op`, {
      method: "PATCH", headers: { "impersonate-user": "op-3", "content-type": "application/apply-patch+yaml" },
      body: JSON.stringify(cm("ssa")),
    });
    expect(applied.status).toBe(201);
    stop();
    await as("op-1", "POST", CM, cm("unheard"));
    expect(heard.map((w) => [w.client, w.verb, w.plural, w.name.startsWith("gen-") ? "gen-*" : w.name])).toEqual([
      ["op-1", "create", "configmaps", "heard"], ["op-2", "patch", "configmaps", "heard"],
      ["op-2", "create", "configmaps", "gen-*"], ["op-1", "delete", "configmaps", "heard"],
      ["op-3", "patch", "configmaps", "ssa"],
    ]);
    expect(heard[2]).toMatchObject({ group: "", namespace: "default", generateName: "gen-" });
  });

  test("a client cut off from its write on: that write stands, its answer and every later request are refused", async () => {
    const stop = sb.faults.clients.onWrite((w) => { if (w.name === "last") sb.faults.clients.cutOff(w.client); });
    const last = await as("doomed", "POST", CM, cm("last"));
    stop();
    expect(last.status).toBe(503); // it never hears that its write was made
    expect(sb.store.get("", "configmaps", "default", "last")).toBeDefined();
    const after = await as("doomed", "POST", CM, cm("never"));
    expect(after.status).toBe(403);
    expect(after.body.message).toContain("cut off");
    expect(sb.store.get("", "configmaps", "default", "never")).toBeUndefined();
    expect((await as("doomed", "GET", CM)).status).toBe(403);
    expect((await as("other", "POST", CM, cm("alive"))).status).toBe(201);
    expect(sb.faults.clients.isCutOff("doomed")).toBe(true);
    sb.faults.reset();
    expect((await as("doomed", "GET", CM)).status).toBe(200);
  });

  test("failWrites answers a client's chosen write (after `skip` matching ones) with the status, unmade", async () => {
    const heard: WriteRecord[] = [];
    const stop = sb.faults.clients.onWrite((w) => heard.push(w));
    sb.faults.clients.failWrites({ clientPrefix: "op-", status: 409, verb: "create", plural: "configmaps", skip: 1 });
    expect((await as("op-1", "POST", CM, cm("f1"))).status).toBe(201);
    expect((await as("someone", "POST", CM, cm("f2"))).status).toBe(201); // not a matching client
    const failed = await as("op-2", "POST", CM, cm("f3"));
    expect(failed.status).toBe(409);
    expect(sb.store.get("", "configmaps", "default", "f3")).toBeUndefined();
    expect((await as("op-2", "POST", CM, cm("f3"))).status).toBe(201); // once only (count 1)
    stop();
    expect(heard.find((w) => w.failed !== undefined)).toMatchObject({ client: "op-2", verb: "create", failed: 409 });
  });
});

describe("mergeWatches", () => {
  test("only the latest state of each object is delivered, on release, in resourceVersion order", async () => {
    await as("t", "POST", CM, cm("m1"));
    const w = await WatchReader.open(sb, `${CM}?watch=true&resourceVersion=${sb.store.resourceVersion()}`);
    sb.faults.mergeWatches({ plural: "configmaps" });
    await as("t", "PATCH", `${CM}/m1`, { data: { k: "running" } });
    await as("t", "PATCH", `${CM}/m1`, { data: { k: "done" } });
    await as("t", "POST", CM, cm("m2"));
    await as("t", "POST", CM, cm("gone-unseen"));
    await as("t", "DELETE", `${CM}/gone-unseen`);
    expect(sb.faults.pendingMerged()).toBe(2);
    sb.faults.releaseMerged();
    const first = await w.nextChange(3000);
    const second = await w.nextChange(3000);
    expect([first.type, first.object.metadata.name, first.object.data.k]).toEqual(["MODIFIED", "m1", "done"]);
    expect([second.type, second.object.metadata.name]).toEqual(["ADDED", "m2"]);
    expect(sb.faults.pendingMerged()).toBe(0);
    await as("t", "POST", CM, cm("after"));
    const next = await w.nextChange(3000); // made and deleted while merged: gone-unseen was never delivered
    expect([next.type, next.object.metadata.name]).toEqual(["ADDED", "after"]);
    w.close();
  });

  test("an object deleted and made again under its name is told as its deletion, then the new one", async () => {
    const old = (await as("t", "POST", CM, cm("again"))).body;
    const w = await WatchReader.open(sb, `${CM}?watch=true&resourceVersion=${sb.store.resourceVersion()}`);
    sb.faults.mergeWatches({ plural: "configmaps" });
    await as("t", "DELETE", `${CM}/again`);
    const made = (await as("t", "POST", CM, cm("again"))).body;
    await as("t", "PATCH", `${CM}/again`, { data: { k: "new" } });
    sb.faults.releaseMerged();
    const first = await w.nextChange(3000);
    const second = await w.nextChange(3000);
    // never one MODIFIED turning the old object into the new (a uid a watch cannot change)
    expect([first.type, first.object.metadata.uid]).toEqual(["DELETED", old.metadata.uid]);
    expect([second.type, second.object.metadata.uid, second.object.data.k]).toEqual(["ADDED", made.metadata.uid, "new"]);
    w.close();
  });

  test("made again and gone again while merged: only the first one's deletion is told", async () => {
    const old = (await as("t", "POST", CM, cm("twice"))).body;
    const w = await WatchReader.open(sb, `${CM}?watch=true&resourceVersion=${sb.store.resourceVersion()}`);
    sb.faults.mergeWatches({ plural: "configmaps" });
    await as("t", "DELETE", `${CM}/twice`);
    await as("t", "POST", CM, cm("twice"));
    await as("t", "DELETE", `${CM}/twice`);
    sb.faults.releaseMerged();
    const first = await w.nextChange(3000);
    expect([first.type, first.object.metadata.uid]).toEqual(["DELETED", old.metadata.uid]);
    await as("t", "POST", CM, cm("later"));
    const next = await w.nextChange(3000);
    expect([next.type, next.object.metadata.name]).toEqual(["ADDED", "later"]);
    w.close();
  });

  test("an object made and deleted unseen: the release's bookmark carries the stream past its deletion", async () => {
    const w = await WatchReader.open(sb, `${CM}?watch=true&allowWatchBookmarks=true&resourceVersion=${sb.store.resourceVersion()}`);
    expect((await w.next(3000)).type).toBe("BOOKMARK"); // the head committed
    sb.faults.mergeWatches({ plural: "configmaps" });
    await as("t", "POST", CM, cm("swallowed"));
    await as("t", "DELETE", `${CM}/swallowed`);
    const deletedAt = Number(sb.store.resourceVersion());
    sb.faults.releaseMerged();
    // a real watch would have brought the ADDED and DELETED: the client's version goes past them all the same
    const line = await w.next(3000);
    expect(line.type).toBe("BOOKMARK");
    expect(Number(line.object.metadata.resourceVersion)).toBeGreaterThanOrEqual(deletedAt);
    w.close();
  });
});
