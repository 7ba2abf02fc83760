// Shared fixtures for the peering tests: a sandbox with the peering CRDs installed, a client
// from the sandbox's own kubeconfig, a memory logger, and waits that resolve on the toggle's
// own transitions (no sleeps as synchronisation).

import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { crdResource, formatTime, Peering, peeringCRDs, type PeeringGroup, type PeeringOptions } from "../../src/peering/index.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { linkedSignal } from "../../src/util/abort.ts";
import { Logger, memorySink, type MemorySink } from "../../src/util/log.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { Watcher } from "../../src/watching/watcher.ts";

export const configmaps: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

export interface Env {
  sandbox: Sandbox;
  client: KubeClient;
  stop(): Promise<void>;
}

export async function env(options: { crds?: PeeringGroup[] } = {}): Promise<Env> {
  const sandbox = await startSandbox();
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  for (const group of options.crds ?? ["kobun.dev"]) await installCRDs(client, group);
  return {
    sandbox,
    client,
    async stop() {
      client.close();
      await sandbox.stop();
    },
  };
}

export async function installCRDs(client: KubeClient, group: PeeringGroup): Promise<void> {
  for (const crd of peeringCRDs(group)) await client.create(crdResource, null, crd);
}

export function testLogger(): { logger: Logger; lines: string[]; logged: MemorySink["until"] } {
  const sink = memorySink("debug");
  return { logger: new Logger(sink), lines: sink.lines, logged: (pattern, o) => sink.until(pattern, o) };
}

/** Log lines at a level (the plain format starts with the time, then the padded level). */
export function linesAt(lines: string[], level: "DEBUG" | "INFO" | "WARN" | "ERROR"): string[] {
  return lines.filter((l) => l.split(" ")[1] === level);
}

/** Resolves when the toggle reaches `frozen` (at once if it already is there). */
export function until(toggle: Toggle, frozen: boolean, timeoutMs = 5000): Promise<number> {
  if (toggle.frozen === frozen) return Promise.resolve(Date.now());
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`toggle did not become ${frozen ? "frozen" : "running"} within ${timeoutMs} ms; holders: ${JSON.stringify(toggle.reasons())}`));
    }, timeoutMs);
    const off = toggle.onChange((now) => {
      if (now !== frozen) return;
      clearTimeout(timer);
      off();
      resolve(Date.now());
    });
  });
}

/** A record as another operator (or a killed one) would have left it. */
export function record(priority: number, lifetime: number, lastseen = Date.now()): Record<string, unknown> {
  return { priority, lifetime, lastseen: formatTime(lastseen) };
}

/** Writes a record directly, as a peer that is not a running `Peering` (a ghost, or Kopf). */
export async function writeRaw(client: KubeClient, resource: Resource, namespace: string | null, name: string, id: string, value: unknown): Promise<void> {
  await client.patch(resource, namespace, name, { status: { [id]: value } }, { type: "merge" });
}

/**
 * The toy resource loop the runtime uses: wait until running, then watch with a signal that
 * the freeze aborts. Records what it sees and when each stream ended.
 */
export class ToyLoop {
  readonly seen = new Set<string>();
  readonly log: string[] = [];
  streamsEnded = 0;
  relists = 0;
  private readonly controller = new AbortController();
  readonly done: Promise<void>;
  private waiters: (() => boolean)[] = [];

  constructor(client: KubeClient, toggle: Toggle, namespace = "default") {
    const signal = this.controller.signal;
    this.done = (async () => {
      const watcher = new Watcher(client, configmaps, { namespace });
      while (await toggle.waitRunning(signal)) {
        const link = linkedSignal(signal, toggle.runningSignal);
        try {
          for await (const event of watcher.events(link.signal)) {
            if (event.type === "relist-done") this.relists++;
            if ("object" in event && event.type !== "deleted") this.seen.add(event.object.metadata.name!);
            this.log.push(event.type);
            this.wake();
          }
        } finally {
          link.dispose();
        }
        this.streamsEnded++;
        this.wake();
      }
    })();
  }

  private wake(): void {
    this.waiters = this.waiters.filter((w) => !w());
  }

  until(pred: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`toy loop: timed out waiting for ${what}; log: ${this.log.join(",")}`)), timeoutMs);
      const check = () => {
        if (!pred()) return false;
        clearTimeout(timer);
        resolve();
        return true;
      };
      if (!check()) this.waiters.push(check);
    });
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.done;
  }
}

export function cm(name: string, namespace = "default"): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data: {} };
}

/** Polls a cheap synchronous condition, for counters the sandbox cannot announce (open watches, stored objects). */
export async function eventually(cond: () => boolean, timeoutMs = 2000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(2);
  }
}

export interface PeeringHandle {
  peering: Peering;
  toggle: Toggle;
  lines: string[];
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Starts a Peering on the "default" peering object of namespace "default" with a memory
 * logger, and records it in `running` so the suite's afterEach can stop it.
 */
export function startPeering(
  e: Env,
  running: { controller: AbortController; done: Promise<void> }[],
  defaults: Partial<PeeringOptions>,
  options: Partial<PeeringOptions> & { id: string },
): PeeringHandle {
  const toggle = options.toggle ?? new Toggle();
  const { logger, lines } = testLogger();
  const peering = new Peering({
    client: e.client, toggle, name: "default", namespace: "default", priority: 0, lifetime: 60,
    group: "kobun.dev", logger, mandatory: false, ...defaults, ...options,
  });
  const controller = new AbortController();
  const handle = { peering, toggle, lines, controller, done: peering.run(controller.signal) };
  running.push(handle);
  return handle;
}
