// Issue 33: ctx.adopt(child) adopts by the handled object (Kopf's adopt() without an owner), and
// ctx.event takes the object and the message as optional, any type, and exceptions (Kopf's
// kopf.event/info/warn/exception); activities post with ctx.event about an object they name.
// Against the sandbox, through the operator's poster; the argument checks on a poster that sends nothing.

import { expect, test } from "bun:test";
import Type from "typebox";
import { startSandbox } from "@kobun/sandbox";
import { defineResource, Registry, resolveSettings, resource, run, sleep, type KubeObject } from "kobun";
import { startOperator } from "kobun/testing";
import { KubeClient } from "../../src/kube/client.ts";
import { eventRecorder } from "../../src/handling/recorder.ts";
import { EventPoster } from "../../src/posting/poster.ts";

const Shops = defineResource({
  group: "testing.kobun.dev", kind: "Shop", plural: "shops",
  schema: {
    spec: Type.Object({}),
    status: Type.Object({
      adopt: Type.Optional(Type.Object({ child: Type.String(), keptLabels: Type.Record(Type.String(), Type.String()) })),
    }),
  },
});

class OutOfStock extends Error {} // sets no `name`: the reason is still its class's

test("ctx.adopt(child) names, places, labels and owns the child by the handled object; explicit options still win", async () => {
  const registry = new Registry();
  registry.on.create(Shops, async ({ adopt, api }) => {
    const made = await api.create(adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: {}, data: {} }));
    const kept = adopt({ apiVersion: "v1", kind: "Secret", metadata: { name: "own", labels: { tier: "mine" } } },
      { labels: ["tier"] });
    return { child: made.metadata.name, keptLabels: kept.metadata.labels };
  }, { id: "adopt", children: ["configmaps"] });
  await using kit = await startOperator({ registry, logLevel: "silent" });
  const shop = await kit.apply(Shops, { metadata: { name: "corner", labels: { app: "shop", tier: "gold" } }, spec: {} });
  const done = await kit.until(Shops, "corner", (o) => o.status?.adopt?.child);
  const name = done.status!.adopt!.child;
  expect(name).toStartWith("corner-");
  expect(done.status!.adopt!.keptLabels).toEqual({ tier: "mine" }); // the child's own label wins
  const child = await kit.get(resource.configmaps, name);
  expect(child?.metadata.namespace).toBe(shop.metadata.namespace!);
  expect(child?.metadata.labels).toEqual({ app: "shop", tier: "gold" });
  expect(child?.metadata.ownerReferences).toEqual([{
    apiVersion: "testing.kobun.dev/v1", kind: "Shop", name: "corner", uid: shop.metadata.uid!,
    controller: true, blockOwnerDeletion: true,
  }]);
});

test("ctx.event posts about the handled object by default: no message, any type, error, exception", async () => {
  const registry = new Registry();
  registry.on.create(Shops, ({ event, body }) => {
    event.info("Opened");
    event.warn(body, "Crowded", "a queue at the door"); // today's form still works
    event.post("SomeType", "Custom", "a type of its own");
    event.error("Broken", "the till");
    try {
      throw new OutOfStock("no more apples");
    } catch (error) {
      event.exception(error, { message: "Some exception:" });
    }
    event.exception(new TypeError("bad"), body, { reason: "Typed", type: "Error" });
  }, { id: "tell" });
  await using kit = await startOperator({ registry, logLevel: "silent" });
  const shop = await kit.apply(Shops, { metadata: { name: "loud" }, spec: {} });
  // Each Event is its own POST, in flight together: on a loaded machine they may land in any order.
  const events = await kit.events(shop, { until: (list) => list.length >= 7 });
  // An empty message is not stored (omitempty), as kube-apiserver writes a core/v1 Event: the Event has none.
  expect(events.map((e) => [e.type, e.reason, e.message]).sort()).toEqual([
    ["Normal", "Opened", undefined],
    ["Warning", "Crowded", "a queue at the door"],
    ["SomeType", "Custom", "a type of its own"],
    ["Warning", "Broken", "the till"],
    ["Warning", "OutOfStock", "Some exception: no more apples"],
    ["Error", "Typed", "bad"],
    ["Normal", "Logging", "Handler 'tell' succeeded."],
  ].sort());
});

test("startup handlers post with ctx.event about the object they name", async () => {
  const registry = new Registry();
  registry.on.startup(async ({ api, event }) => {
    const marker = await api.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "marker", namespace: "default" } });
    event.info(marker, "Started", "the operator is up");
    expect(() => event.info("NoObject")).toThrow(/name the object the Event is about/);
  });
  await using kit = await startOperator({ registry, logLevel: "silent" });
  const marker = await kit.get(resource.configmaps, "marker");
  const events = await kit.events(marker!, { until: (list) => list.length > 0 });
  expect(events.map((e) => [e.type, e.reason, e.message])).toEqual([["Normal", "Started", "the operator is up"]]);
});

test("a cleanup handler's Events are sent before run() returns", async () => {
  await using sandbox = { ...(await startSandbox()), async [Symbol.asyncDispose]() { await this.stop(); } };
  const registry = new Registry();
  let marker: KubeObject | undefined;
  registry.on.startup(async ({ api }) => {
    marker = await api.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "marker", namespace: "default" } });
  });
  // Events are sent alongside the closing handlers (README: best-effort past them): this one waits, as a
  // cleanup that takes a while would, until its Event is on the server — on a loaded machine a POST can
  // outlast the 10 ms the shutdown gives Events posted in a handler's very last moment.
  registry.on.cleanup(async ({ event, api, signal }) => {
    event.warn(marker!, "Stopping", "the operator is going");
    const selector = { fieldSelector: `involvedObject.uid=${marker!.metadata.uid}` };
    while (!signal.aborted && (await api.list(resource.events, { namespace: "default", ...selector })).length === 0) {
      await sleep(0.01, signal);
    }
  });
  registry.on.event(resource.configmaps, () => {});
  const settings = resolveSettings({
    flags: { kubeconfig: sandbox.kubeconfigPath, namespaces: ["default"], standalone: true, quiet: true },
  });
  const stop = new AbortController();
  const started = Promise.withResolvers<void>();
  const running = run({ signal: stop.signal, settings, registry, onStarted: () => started.resolve() });
  await Promise.race([started.promise, running]);
  stop.abort();
  await running;
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const events = await client.list(await client.resolve(resource.events), { namespace: "default", fieldSelector: `involvedObject.uid=${marker!.metadata.uid}` });
  expect(events.items.map((e: any) => [e.type, e.reason, e.message])).toEqual([["Warning", "Stopping", "the operator is going"]]);
});

test("bad arguments are a TypeError naming the call and what was wrong", () => {
  const poster = new EventPoster({ client: {} as never, enabled: false }); // sends nothing: only the checks run
  const handled = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "d", uid: "u" } };
  const event = eventRecorder(poster, handled);
  expect(() => event.info("")).toThrow(/ctx.event.info: the reason must be a non-empty string, got ""/);
  expect(() => event.warn(handled, undefined as never)).toThrow(/ctx.event.warn: the reason must be a non-empty string/);
  expect(() => event.error("R", 42 as never)).toThrow(/ctx.event.error: the message must be a string, got number/);
  expect(() => event.post("Two words", "R")).toThrow(/ctx.event.post: the type must be one word/);
  expect(() => eventRecorder(poster).exception(new Error("x"))).toThrow(/ctx.event.exception: name the object/);
  expect(() => event.info("Fine")).not.toThrow();
});
