// Metadata-only watching (kobun.yaml resources.<key>.metadataOnly, or every handler declaring
// it with resource(selector, { metadataOnly: true })): the operator receives objects with
// their metadata only (under the resource's own kind), handlers reading ctx.spec get an
// error saying why, progress goes to annotations, and the start-up log says which resources
// are watched metadata-only and why.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { Registry, resource } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { parseConfigText, resolveSettings } from "../../src/config/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { FatalError } from "../../src/runtime/exits.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { memorySink, Logger } from "../../src/util/log.ts";
import type { KubeObject } from "../../src/kube/types.ts";

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
  for (const name of ["before-1", "before-2"]) await configmap(name);
  const schema = { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } };
  const crd = await fetch(`${sandbox.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({
      apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "gadgets.kobun.dev" },
      spec: { group: "kobun.dev", scope: "Namespaced", names: { plural: "gadgets", singular: "gadget", kind: "Gadget" }, versions: [{ name: "v1", served: true, storage: true, schema, subresources: { status: {} } }] },
    }),
  });
  expect(crd.status).toBe(201);
});
afterAll(() => sandbox.stop());

const CM = "/api/v1/namespaces/default/configmaps";
async function configmap(name: string): Promise<void> {
  const response = await fetch(`${sandbox.url}${CM}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name, labels: { app: "x" } }, data: { big: "x".repeat(1000) } }) });
  expect(response.status).toBe(201);
}

const settingsFrom = (resources: string) =>
  resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(`peering: { standalone: true }\nnamespaces: { include: [default] }\n${resources}`, "kobun.yaml") });

/** Runs until `last` (created after start) and the objects created before were received; what the on.event handler got, by name, and the info log. */
async function receive(settingsText: string, register: (registry: Registry, seen: (ctx: { name: string; body: KubeObject; spec: Record<string, any> }) => void) => void, last: string) {
  const bodies = new Map<string, KubeObject>();
  const specErrors: string[] = [];
  const { promise: done, resolve } = Promise.withResolvers<void>();
  const registry = new Registry();
  register(registry, ({ name, body, spec }) => {
    bodies.set(name, body);
    try {
      void spec.big;
    } catch (error) {
      specErrors.push((error as Error).message);
    }
    // Objects are handled in parallel: wait for the ones created before start too.
    if ([last, "before-1", "before-2"].every((wanted) => bodies.has(wanted))) resolve();
  });
  const sink = memorySink("info");
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const stop = new AbortController();
  const { promise: started, resolve: onStarted } = Promise.withResolvers<void>();
  const running = run({ signal: stop.signal, settings: settingsFrom(settingsText), client, registry, logger: new Logger(sink), onStarted: () => onStarted() });
  try {
    await started;
    await configmap(last);
    await done;
  } finally {
    stop.abort();
    await running;
    client.close();
  }
  return { bodies, specErrors, log: sink.lines };
}

test("metadataOnly: true in kobun.yaml: listed and watched objects carry metadata only, as ConfigMaps; ctx.spec says why it is empty", async () => {
  const { bodies, specErrors, log } = await receive("resources:\n  v1/configmaps: { metadataOnly: true }", (registry, seen) => {
    registry.on.event("v1/configmaps", (ctx) => seen(ctx), { id: "every-event" });
  }, "after-1");
  for (const name of ["before-1", "after-1"]) {
    const body = bodies.get(name)!;
    expect([body.apiVersion, body.kind, body.metadata.name, body.metadata.labels, body.data]).toEqual(["v1", "ConfigMap", name, { app: "x" }, undefined]);
  }
  expect(specErrors[0]).toBe("ctx.spec.big: not received, configmaps is watched metadata-only (kobun.yaml:4: resources.v1/configmaps.metadataOnly is true); read ctx.meta, or set metadataOnly: false in kobun.yaml");
  expect(log.filter((line) => line.includes("watching metadata-only"))).toEqual([expect.stringContaining("resource=configmaps")]);
  expect(log.find((line) => line.includes("watching metadata-only"))).toContain("kobun.yaml:4: resources.v1/configmaps.metadataOnly is true");
}, 20_000);

const Declared = resource("configmaps", { metadataOnly: true });

test("every handler declaring metadataOnly on its token: watched metadata-only, the log naming them; an index fn reading spec fails saying why", async () => {
  const { bodies, log } = await receive("", (registry, seen) => {
    registry.on.event(Declared, (ctx) => seen(ctx as never), { id: "names" });
    registry.on.index(Declared, ({ name }) => ({ [name]: true }), { id: "byName" });
    registry.on.index(Declared, ({ name, spec }) => ({ [name]: (spec as Record<string, unknown>).size }), { id: "bySize" });
  }, "after-2");
  expect(bodies.get("after-2")?.data).toBeUndefined();
  expect(log.find((line) => line.includes("watching metadata-only"))).toContain("every handler declares it: names, byName, bySize");
  expect(log.find((line) => line.includes("index fn failed"))).toContain("ctx.spec.size: not received, configmaps is watched metadata-only (every handler declares it: names, byName, bySize)");
}, 20_000);

test("one handler not declaring it, or metadataOnly: false in kobun.yaml, keeps the full watch", async () => {
  const mixed = await receive("", (registry, seen) => {
    registry.on.event(Declared, (ctx) => seen(ctx as never), { id: "names" });
    registry.on.event("configmaps", () => {}, { id: "reads-data" });
  }, "after-3");
  expect(mixed.bodies.get("after-3")?.data?.big).toHaveLength(1000);
  const overruled = await receive("resources:\n  configmaps: { metadataOnly: false }", (registry, seen) => {
    registry.on.event(Declared, (ctx) => seen(ctx as never), { id: "names" });
  }, "after-4");
  expect(overruled.bodies.get("after-4")?.data?.big).toHaveLength(1000);
  expect([...mixed.log, ...overruled.log].filter((line) => line.includes("watching metadata-only"))).toEqual([]);
}, 20_000);

test("a metadata-only resource keeps progress in annotations: a create handler runs once and its object is not handled again", async () => {
  const calls: string[] = [];
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ name }) => void calls.push(name), { id: "once" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const stop = new AbortController();
  const { promise: started, resolve: onStarted } = Promise.withResolvers<void>();
  const running = run({ signal: stop.signal, settings: settingsFrom("resources:\n  v1/configmaps: { metadataOnly: true }"), client, registry, logger: new Logger(memorySink("error")), onStarted: () => onStarted() });
  try {
    await started;
    const written = sandbox.waitFor((r) => r.verb === "patch" && r.path === `${CM}/once-only`, 10_000);
    await configmap("once-only");
    await written;
    const stored = (await (await fetch(`${sandbox.url}${CM}/once-only`)).json()) as KubeObject;
    expect(stored.metadata.annotations?.["kobun.dev/last-handled-configuration"]).toBeString();
    // A later change of the object's metadata is an update, not a second create.
    const relabelled = sandbox.waitFor((r) => r.verb === "patch" && r.path === `${CM}/once-only`, 10_000);
    await fetch(`${sandbox.url}${CM}/once-only`, { method: "PATCH", headers: { "content-type": "application/merge-patch+json" }, body: JSON.stringify({ metadata: { labels: { more: "yes" } } }) });
    await relabelled;
    expect(calls.filter((name) => name === "once-only")).toEqual(["once-only"]);
  } finally {
    stop.abort();
    await running;
    client.close();
  }
}, 20_000);

test("metadataOnly with storage: status stops start-up: status is never received", async () => {
  const registry = new Registry();
  registry.on.create("gadgets.kobun.dev", () => {}, { id: "gadgets" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const error = await run({ settings: settingsFrom("resources:\n  gadgets.kobun.dev: { metadataOnly: true, storage: status }"), client, registry, logger: new Logger(memorySink("error")) })
    .catch((e: unknown) => e)
    .finally(() => client.close());
  expect(error).toBeInstanceOf(FatalError);
  expect((error as FatalError).message).toBe('kobun.yaml:4: resources.gadgets.kobun.dev.storage: "status" cannot be read back from a metadata-only watch (kobun.yaml:4: resources.gadgets.kobun.dev.metadataOnly is true); use "annotations" or "auto"');
}, 15_000);
