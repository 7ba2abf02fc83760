// Shared fixtures for the watching tests: a sandbox, a client for it (from the sandbox's own
// kubeconfig, never the machine's), the configmaps resource, and a Collector that runs a
// watcher in the background and lets a test await a condition on the events seen so far.

import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { Logger, memorySink } from "../../src/util/log.ts";
import type { WatchEvent } from "../../src/watching/types.ts";
import type { Watcher } from "../../src/watching/watcher.ts";
import { startSandbox, type Sandbox, type SandboxOptions } from "@kobun/sandbox";

export const configmaps: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

export interface Env {
  sandbox: Sandbox;
  client: KubeClient;
  stop(): Promise<void>;
}

export async function env(options: SandboxOptions = {}): Promise<Env> {
  const sandbox = await startSandbox(options);
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  return {
    sandbox,
    client,
    async stop() {
      client.close();
      await sandbox.stop();
    },
  };
}

export function testLogger(): { logger: Logger; lines: string[] } {
  const sink = memorySink("debug");
  return { logger: new Logger(sink), lines: sink.lines };
}

export function cm(name: string, data: Record<string, string> = {}, namespace = "default"): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data };
}

/** Runs `watcher.events()` in the background, recording every event and the final error. */
export class Collector {
  readonly events: WatchEvent[] = [];
  error: unknown;
  ended = false;
  readonly controller = new AbortController();
  readonly done: Promise<void>;
  private waiters: { check(): boolean }[] = [];

  constructor(readonly watcher: Watcher, onEvent?: (event: WatchEvent) => void) {
    this.done = (async () => {
      try {
        for await (const event of watcher.events(this.controller.signal)) {
          this.events.push(event);
          onEvent?.(event);
          this.wake();
        }
      } catch (error) {
        this.error = error;
      } finally {
        this.ended = true;
        this.wake();
      }
    })();
  }

  private wake(): void {
    this.waiters = this.waiters.filter((w) => !w.check());
  }

  /** Resolves once `pred` holds for the events so far (or rejects after `timeoutMs`). */
  until(pred: (events: WatchEvent[]) => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`timed out waiting for ${what}; events: ${this.events.map(describe).join(", ")}; error: ${String(this.error)}`));
      }, timeoutMs);
      const waiter = {
        check: () => {
          if (pred(this.events) || this.ended) {
            clearTimeout(timer);
            if (pred(this.events)) resolve();
            else reject(new Error(`watcher ended before ${what}: ${String(this.error)}`));
            return true;
          }
          return false;
        },
      };
      if (!waiter.check()) this.waiters.push(waiter);
    });
  }

  /** Waits for an event of `type` for the object `name`, counting from index `from`. */
  untilEvent(type: WatchEvent["type"], name?: string, from = 0, timeoutMs = 5000): Promise<void> {
    return this.until((events) => events.slice(from).some((e) => e.type === type && (name === undefined || ("object" in e && e.object.metadata.name === name))), timeoutMs, `${type} ${name ?? ""}`);
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.done;
  }

  count(type: WatchEvent["type"]): number {
    return this.events.filter((e) => e.type === type).length;
  }
}

export function describe(e: WatchEvent): string {
  return "object" in e ? `${e.type}:${e.object.metadata.name}${"synthetic" in e && e.synthetic ? "(synthetic)" : ""}` : e.type;
}

/** Polls a cheap synchronous condition (for counters the sandbox cannot announce). */
export async function eventually(cond: () => boolean, timeoutMs = 2000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(2);
  }
}

/** The query parameters of the n-th (0-based) request of `verb` in the sandbox log. */
export function queryOf(sandbox: Sandbox, verb: string, n: number): URLSearchParams {
  const records = sandbox.stats.log.filter((r) => r.verb === verb);
  const record = n < 0 ? records.at(n) : records[n];
  if (!record) throw new Error(`no ${verb} request #${n}; log: ${sandbox.stats.log.map((r) => `${r.verb} ${r.query}`).join(" | ")}`);
  return new URLSearchParams(record.query);
}

/**
 * Waits until the sandbox holds `n` open watch streams. A request being logged is not yet a
 * registered stream, and faults only reach registered ones.
 */
export function watchOpen(sandbox: Sandbox, n = 1): Promise<void> {
  return eventually(() => sandbox.stats.openWatches() >= n, 3000, `${n} open watch(es)`);
}
