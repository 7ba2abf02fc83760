// A small harness that drives the handling engine without the runtime: a real sandbox API
// server, a real KubeClient and Watcher, and a Reconciler fed from the watch.
// `until(pred)` re-checks its condition whenever the processor completes a write or a
// handler or watch event happens — no sleeping as synchronisation.

import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { resolveSettings } from "../../src/config/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Watcher } from "../../src/watching/watcher.ts";
import { Reconciler, type ReconcilerOptions } from "../../src/reconciling/reconciler.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { EventPoster } from "../../src/posting/poster.ts";
import { TaskScope } from "../../src/util/scope.ts";

const CRD = parse(readFileSync(new URL("../../handlers/kobunexample.crd.yaml", import.meta.url), "utf8"));

/** A CRD like the example's, without a status subresource: kobunplains.kobun.dev/v1. */
function plainCrd(): any {
  const crd = structuredClone(CRD);
  crd.metadata.name = "kobunplains.kobun.dev";
  crd.spec.names = { kind: "KobunPlain", plural: "kobunplains", singular: "kobunplain" };
  delete crd.spec.versions[0].subresources;
  return crd;
}

/** A kobun.yaml's content, as a test writes it: `{ handling: { retries: null } }`. */
export type SettingsFile = Record<string, Record<string, unknown>>;

/**
 * What `kobun run` gets from a kobun.yaml of `file` (the production path: the schema's defaults
 * under what the test sets), with the batch window shrunk to 0 unless the test sets it, so its
 * events are handled at once rather than 100 ms apart.
 */
function settingsOf(file: SettingsFile = {}): ReturnType<typeof resolveSettings> {
  return resolveSettings({ fileData: { ...file, workers: { batchWindow: 0, ...file.workers } } });
}

const CRDS: Resource = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true };

export interface Harness {
  sandbox: Sandbox;
  client: KubeClient;
  resource: Resource;
  registry: Registry;
  processor: Reconciler;
  poster: EventPoster;
  create(name: string, spec?: Record<string, any>, meta?: Record<string, any>): Promise<KubeObject>;
  get(name: string): any;
  until<T>(check: () => T | undefined | false, timeoutMs?: number): Promise<T>;
  /** Wakes every `until` to re-check (call from handlers). */
  poke(): void;
  /** Stops the processor and watcher (the sandbox keeps running) and starts a fresh pair. */
  restart(registry?: Registry): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(
  options: {
    plain?: boolean; registry?: Registry; processor?: Partial<ReconcilerOptions>; sandbox?: Sandbox;
    /** The reconciler's timings and limits, as a kobun.yaml would set them (see settingsOf). */
    settings?: SettingsFile;
    /** Handle this (built-in) resource instead of the example CRD, e.g. "secrets/v1"; create() is then for the CRD only. */
    selector?: string;
  } = {},
): Promise<Harness> {
  const sandbox = options.sandbox ?? (await startSandbox());
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const crd = options.plain ? plainCrd() : CRD;
  if (!options.selector) {
    try {
      await client.create(CRDS, null, crd);
    } catch (error) {
      if ((error as { code?: number }).code !== 409) throw error;
    }
    client.invalidateDiscovery();
  }
  const resource = await client.resolve(options.selector ?? `${crd.spec.names.plural}.kobun.dev/v1`);
  let registry = options.registry ?? new Registry();
  const settings = settingsOf(options.settings);

  const checks = new Set<() => void>();
  const poke = () => {
    for (const check of [...checks]) check();
  };
  // Observe writes completing (not a mock: every call goes to the real client).
  const observed = {
    patch: (async (...args: Parameters<KubeClient["patch"]>) => {
      try {
        return await client.patch(...args);
      } finally {
        queueMicrotask(poke);
      }
    }) as KubeClient["patch"],
    get: client.get.bind(client) as KubeClient["get"],
    create: (async (...args: Parameters<KubeClient["create"]>) => {
      try {
        return await client.create(...args);
      } finally {
        queueMicrotask(poke);
      }
    }) as KubeClient["create"],
  };

  let scope!: TaskScope;
  let poster!: EventPoster;
  let processor!: Reconciler;
  const start = () => {
    scope = new TaskScope("harness");
    poster = new EventPoster({ client: observed });
    poster.start(scope);
    // The production settings (the schema's defaults: retries, backoff, timeouts) under the test's.
    processor = new Reconciler({ client: observed, resource, registry, poster, settings, ...options.processor });
    const watcher = new Watcher(client, resource, { streamingList: "never" });
    const p = processor;
    scope.spawn("watch", async (signal) => {
      for await (const event of watcher.events(signal)) {
        p.accept(event);
        queueMicrotask(poke);
      }
    });
  };
  start();

  const h: Harness = {
    sandbox,
    client,
    resource,
    get registry() {
      return registry;
    },
    get processor() {
      return processor;
    },
    get poster() {
      return poster;
    },
    async create(name, spec = {}, meta = {}) {
      return client.create(resource, "default", {
        apiVersion: "kobun.dev/v1", kind: crd.spec.names.kind, metadata: { name, namespace: "default", ...meta }, spec,
      });
    },
    get(name) {
      return sandbox.store.get(resource.group, resource.plural, "default", name);
    },
    until(check, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const run = () => {
          let value;
          try {
            value = check();
          } catch (error) {
            finish();
            return reject(error);
          }
          if (value !== undefined && value !== false) {
            finish();
            resolve(value as never);
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`until: condition not met within ${timeoutMs} ms: ${check.toString().slice(0, 200)}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          checks.delete(run);
        };
        checks.add(run);
        run();
      });
    },
    poke,
    async restart(next) {
      await processor.close(1000);
      await scope.close(1000);
      if (next) registry = next;
      start();
    },
    async stop() {
      await processor.close(1000);
      await scope.close(1000);
      client.close();
      if (!options.sandbox) await sandbox.stop();
    },
  };
  return h;
}
