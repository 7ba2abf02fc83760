// Faults scoped to what they aim at: expireWatches on one resource's watches only; mergeWatches
// holding back the bookmarks of the held resource's watches only; failRequests failing a chosen
// read (a GET, a LIST) of one client; onRequest hearing each request's target before it is served.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import type { RequestTarget } from "../src/client-faults.ts";
import { cm, CM, WatchReader } from "./helpers.ts";

const SECRETS = "/api/v1/namespaces/default/secrets";
const secret = (name: string) => ({ apiVersion: "v1", kind: "Secret", metadata: { name }, data: {} });

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox({ bookmarkIntervalMs: 50 }); });
afterEach(() => sb.faults.reset());
afterAll(async () => { await sb.stop(); });

async function as(who: string, method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { "impersonate-user": who, "content-type": "application/json" };
  return fetch(sb.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

const watchOf = (path: string) =>
  WatchReader.open(sb, `${path}?watch=true&allowWatchBookmarks=true&resourceVersion=${sb.store.resourceVersion()}`);

describe("expireWatches({ plural })", () => {
  test("only that resource's watches get ERROR 410 and close; the others go on", async () => {
    const maps = await watchOf(CM);
    const secrets = await watchOf(SECRETS);
    sb.faults.expireWatches({ plural: "configmaps" });
    const expired = await maps.nextChange();
    expect(expired).toMatchObject({ type: "ERROR", object: { code: 410, reason: "Expired" } });
    expect(await maps.nextLine()).toBeUndefined(); // closed after the ERROR
    expect((await as("t", "POST", SECRETS, secret("after-expiry"))).status).toBe(201);
    expect(await secrets.nextChange()).toMatchObject({ type: "ADDED", object: { metadata: { name: "after-expiry" } } });
    secrets.close();
  });
});

describe("mergeWatches({ plural }) and bookmarks", () => {
  test("the held resource's watches send no bookmark; other resources' watches send theirs", async () => {
    const maps = await watchOf(CM);
    const secrets = await watchOf(SECRETS);
    sb.faults.mergeWatches({ plural: "configmaps" });
    expect((await as("t", "POST", CM, cm("held"))).status).toBe(201);
    // two bookmark periods of the secrets watch pass: the configmaps watch, opened first, had its turns too
    expect((await secrets.next()).type).toBe("BOOKMARK");
    expect((await secrets.next()).type).toBe("BOOKMARK");
    expect(sb.faults.pendingMerged()).toBe(1);
    sb.faults.releaseMerged();
    // no bookmark on the held watch carried it past the held event (one sent before the rule began may come first)
    let line = await maps.next();
    const before: number[] = [];
    for (; line.type === "BOOKMARK"; line = await maps.next()) {
      before.push(Number(line.object.metadata.resourceVersion));
    }
    expect(line).toMatchObject({ type: "ADDED", object: { metadata: { name: "held" } } });
    const heldAt = Number(line.object.metadata.resourceVersion);
    expect(before.filter((rv) => rv >= heldAt)).toEqual([]);
    maps.close();
    secrets.close();
  });
});

describe("clients.failRequests and onRequest", () => {
  test("a chosen GET of a client is answered 429 with Retry-After; the rest are served", async () => {
    expect((await as("t", "POST", CM, cm("read-me"))).status).toBe(201);
    sb.faults.clients.failRequests({ clientPrefix: "op-", status: 429, verb: "get", plural: "configmaps", skip: 1 });
    expect((await as("op-1", "GET", `${CM}/read-me`)).status).toBe(200);
    expect((await as("other", "GET", `${CM}/read-me`)).status).toBe(200); // not a matching client: uncounted
    const throttled = await as("op-2", "GET", `${CM}/read-me`);
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get("retry-after")).toBe("1");
    expect(await throttled.json()).toMatchObject({ reason: "TooManyRequests", details: { retryAfterSeconds: 1 } });
    expect((await as("op-1", "GET", `${CM}/read-me`)).status).toBe(200); // count 1: spent
  });

  test("failRequests with no verb fails any request but a watch (a LIST here); failWrites never a read", async () => {
    sb.faults.clients.failWrites({ status: 500, verb: "list" });
    expect((await as("op-1", "GET", CM)).status).toBe(200);
    sb.faults.clients.failRequests({ status: 503, plural: "configmaps" });
    const listed = await as("op-1", "GET", CM);
    expect(listed.status).toBe(503);
    expect(listed.headers.get("retry-after")).toBe("1");
  });

  test("onRequest hears each request's target before it is served; a cut-off there refuses it", async () => {
    const heard: [string, string, RequestTarget | undefined][] = [];
    const stop = sb.faults.clients.onRequest((client, verb, target) => {
      heard.push([client, verb, target]);
      if (verb === "create" && client === "doomed") sb.faults.clients.cutOff(client);
    });
    expect((await as("op-1", "GET", `${CM}/read-me`)).status).toBe(200);
    expect((await as("doomed", "POST", CM, cm("never-made"))).status).toBe(403);
    stop();
    expect(sb.store.get("", "configmaps", "default", "never-made")).toBeUndefined();
    expect(heard).toEqual([
      ["op-1", "get", { group: "", plural: "configmaps", namespace: "default", name: "read-me" }],
      ["doomed", "create", { group: "", plural: "configmaps", namespace: "default", name: "" }],
    ]);
  });
});
