// A sandbox with a Widget CRD (namespaced, with a status subresource) and an operator run()
// around a registry, for the on.reconcile tests: waits on conditions, never on sleeps.

import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient, type KubeObject, type Resource } from "../../src/kube/index.ts";
import { run } from "../../src/runtime/index.ts";
import { Logger, memorySink } from "../../src/util/log.ts";

export const WIDGETS: Resource = {
  group: "test.kobun.dev", version: "v1", plural: "widgets", kind: "Widget", namespaced: true, statusSubresource: true,
};
export const CONFIGMAPS: Resource = {
  group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false,
};
const CRDS: Resource = {
  group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition",
  namespaced: false, statusSubresource: false,
};

const WIDGET_CRD = {
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition",
  metadata: { name: "widgets.test.kobun.dev" },
  spec: {
    group: "test.kobun.dev", scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget" },
    versions: [{
      name: "v1", served: true, storage: true, subresources: { status: {} },
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
    }],
  },
};

export interface World {
  sandbox: Sandbox;
  client: KubeClient;
  lines: string[];
  stop(): Promise<void>;
}

/** A sandbox (its options given) with the Widget CRD; `operate(registry, settings)` runs an operator until stop(). */
export async function world(
  sandboxOptions: Parameters<typeof startSandbox>[0] = {},
): Promise<World & { operate(registry: Registry, file?: object): Promise<void> }> {
  const sandbox = await startSandbox(sandboxOptions);
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  await client.create(CRDS, null, WIDGET_CRD as KubeObject);
  const sink = memorySink("debug");
  const stop = new AbortController();
  let running: Promise<unknown> = Promise.resolve();
  return {
    sandbox, client, lines: sink.lines,
    async operate(registry, file = {}) {
      let started!: () => void;
      const ready = new Promise<void>((resolve) => (started = resolve));
      const settings = resolveSettings({
        fileData: { workers: { batchWindow: 0 }, ...file },
        flags: { namespaces: ["default"], standalone: true },
      });
      running = run({ signal: stop.signal, client, registry, settings, logger: new Logger(sink), onStarted: () => started() });
      await Promise.race([ready, running.then(() => { throw new Error("the operator ended before it started"); })]);
    },
    async stop() {
      stop.abort();
      await running.catch(() => {});
      client.close();
      await sandbox.stop();
    },
  };
}

export function widget(name: string, spec: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: "test.kobun.dev/v1", kind: "Widget", metadata: { name, namespace: "default" }, spec };
}

/** Polls `read` until `done` holds (or throws after `ms`); resolves with the last value read. */
export async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await Bun.sleep(10);
  }
}

/** The object, or undefined when it does not exist. */
export async function maybe(client: KubeClient, resource: Resource, name: string): Promise<KubeObject | undefined> {
  try {
    return await client.get(resource, "default", name);
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

/** The ConfigMap `<widget>-child` of the reconciled widget, owned by it (its controller), with `data`. */
export function ownedChild(
  ctx: { name: string; namespace?: string | undefined; uid: string }, data?: Record<string, string>,
): KubeObject {
  return {
    apiVersion: "v1", kind: "ConfigMap",
    metadata: {
      name: `${ctx.name}-child`, namespace: ctx.namespace,
      ownerReferences: [{ apiVersion: "test.kobun.dev/v1", kind: "Widget", name: ctx.name, uid: ctx.uid, controller: true }],
    },
    ...(data ? { data } : {}),
  };
}
