// ctx.api: handlers talk to the API server with the operator's own client, their signal
// wired in, errors carrying the Status, and their writes to their own object not coming
// back as updates. Against the sandbox over real loopback sockets.

import { afterEach, expect, test } from "bun:test";
import type { ApiWatchEvent } from "../../src/declaring/api.ts";
import { ApiClient } from "../../src/handling/api.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { ApiError } from "../../src/kube/errors.ts";
import type { ConfigMap } from "../../src/kube/kinds.ts";
import { Watcher } from "../../src/watching/watcher.ts";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

async function harnessWithApi(registry: Registry): Promise<Harness> {
  let api: ApiClient | undefined;
  const harness = await startHarness({
    registry,
    processor: {
      // The runtime's wiring (runtime/handler-api.ts), against the harness's own client.
      get api() {
        return api;
      },
    },
  });
  api = new ApiClient({
    client: harness.client,
    fieldManager: "kobun-test",
    watch: (resource, o, signal) => new Watcher(harness.client, resource, { ...o, streamingList: "never" }).events(signal) as AsyncIterable<ApiWatchEvent>,
  });
  await harness.restart(); // the processor is built again, now with the api
  return harness;
}

test("ctx.api creates and reads a child ConfigMap with the operator's credentials, typed", async () => {
  const registry = new Registry();
  registry.on.create("kobunexamples.kobun.dev/v1", async ({ api, name }) => {
    await api.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${name}-config` }, data: { greeting: `hello ${name}` } });
    const child: ConfigMap = await api.get("configmaps", `${name}-config`); // defaults to the object's namespace
    const listed = await api.list("v1/configmaps", { labelSelector: "" });
    return { greeting: child.data?.greeting, listed: listed.some((c) => c.metadata.name === `${name}-config`), manager: api.fieldManager };
  }, { id: "create_fn" });
  h = await harnessWithApi(registry);
  await h.create("parent");
  const status = await h.until(() => h!.get("parent")?.status?.create_fn);
  expect(status).toEqual({ greeting: "hello parent", listed: true, manager: "kobun-test" });
  const child = h.sandbox.store.get("", "configmaps", "default", "parent-config") as any;
  expect(child.data).toEqual({ greeting: "hello parent" });
});

test("a handler patching its own spec through ctx.api does not run its update handler (no self-triggered loop)", async () => {
  const registry = new Registry();
  const updates: unknown[] = [];
  registry.on.create("kobunexamples.kobun.dev/v1", async ({ api, resource, name }) => {
    await api.patch(resource, name, { spec: { defaulted: "yes" }, metadata: { labels: { tier: "gold" } } });
    return "done";
  }, { id: "create_fn" });
  registry.on.update("kobunexamples.kobun.dev/v1", ({ diff }) => {
    updates.push(diff.map((d) => d.path.join(".")));
    return "updated";
  }, { id: "update_fn" });
  h = await harnessWithApi(registry);
  await h.create("selfish", { size: 1 });
  await h.until(() => h!.get("selfish")?.status?.create_fn === "done");
  await h.processor.settled();
  const object = h.get("selfish") as any;
  expect(object.spec).toEqual({ size: 1, defaulted: "yes" });
  expect(object.metadata.labels).toEqual({ tier: "gold" });
  expect(updates).toEqual([]);

  // A change by someone else still is an update, and its diff names only that change.
  await h.client.patch(h.resource, "default", "selfish", { spec: { size: 2 } });
  await h.until(() => h!.get("selfish")?.status?.update_fn === "updated");
  expect(updates).toEqual([["spec.size"]]);
});

test("ctx.api errors carry the Kubernetes Status", async () => {
  const registry = new Registry();
  registry.on.create("kobunexamples.kobun.dev/v1", async ({ api }) => {
    try {
      await api.get("configmaps", "no-such-config");
      return "found?";
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return { code: error.code, reason: error.status.reason, kind: error.status.kind };
    }
  }, { id: "create_fn" });
  h = await harnessWithApi(registry);
  await h.create("lookup");
  expect(await h.until(() => h!.get("lookup")?.status?.create_fn)).toEqual({ code: 404, reason: "NotFound", kind: "Status" });
});

test("ctx.api.watch streams other objects and ends when the handler's signal aborts", async () => {
  const registry = new Registry();
  const seen: string[] = [];
  let ended: unknown;
  registry.on.create("kobunexamples.kobun.dev/v1", async ({ api }) => {
    try {
      for await (const event of api.watch("configmaps")) {
        if (event.type === "added" || event.type === "listed") seen.push(event.object.metadata.name!);
        h!.poke();
      }
      ended = "loop ended";
    } catch (error) {
      ended = (error as Error).name;
    }
    h!.poke();
  }, { id: "watch_fn" });
  h = await harnessWithApi(registry);
  await h.create("watcher");
  await h.client.create(await h.client.resolve("configmaps"), "default", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "watched" } });
  await h.until(() => seen.includes("watched"));
  const report = await h.processor.close(2000); // aborts the handler's signal: the watch must end at once
  expect(report.abandoned).toEqual([]);
  expect(ended).toBeDefined();
});

test("ctx.event posts Kubernetes Events about any object, a child included", async () => {
  const registry = new Registry();
  registry.on.create("kobunexamples.kobun.dev/v1", async ({ api, body, event, name }) => {
    const child = await api.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${name}-child` } });
    for (let i = 0; i < 100; i++) event.info(child, "Adopted", `owned by ${name}`); // a hot loop: one Event, counted
    event.warn(body, "ChildCreated", `created ${child.metadata.name}`);
  }, { id: "create_fn" });
  h = await harnessWithApi(registry);
  await h.create("talker");
  const events = () => (h!.sandbox.store.objects("", "events", "default") as any[]).filter((e) => e.involvedObject?.name?.startsWith("talker"));
  const found = await h.until(() => {
    const all = events();
    const adopted = all.find((e) => e.reason === "Adopted");
    return all.some((e) => e.reason === "ChildCreated") && adopted?.count === 100 && all;
  });
  expect(found.filter((e: any) => e.reason === "Adopted")).toHaveLength(1);
  expect(found.find((e: any) => e.reason === "ChildCreated")).toMatchObject({ type: "Warning", involvedObject: { kind: "KobunExample", name: "talker" } });
});

test("a handler's own write to its object leaves kobun's /status write fenced by that write's version: no conflict, no request more", async () => {
  const registry = new Registry();
  registry.on.create("kobunexamples.kobun.dev/v1", async ({ api, resource, name }) => {
    await api.patch(resource, name, { status: { seen: true } }, { subresource: "status" });
    return "done";
  }, { id: "create_fn" });
  h = await harnessWithApi(registry);
  const requests: string[] = [];
  h.client.observe({ requested: (method, _host, code) => void requests.push(`${method} ${code}`) });
  await h.create("own", { size: 1 });
  await h.until(() => h!.get("own")?.status?.create_fn === "done");
  await h.processor.settled();
  // The handler's, then kobun's one of /status (results and progress), on the version the handler's write returned.
  expect(requests.filter((r) => r.startsWith("PATCH"))).toEqual(["PATCH 200", "PATCH 200"]);
  expect(h.get("own").status).toMatchObject({ seen: true, create_fn: "done" });
});
