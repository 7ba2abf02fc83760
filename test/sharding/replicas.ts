// Shard-Lease replicas on a fresh sandbox per test: `replica(id, options)` starts one
// ShardLeases in namespace "default", group "op", and `track` adds other work of the test's;
// every one still running is stopped (and waited for) after each test, before the sandbox goes.

import { afterEach, beforeEach } from "bun:test";
import { ShardLeases, type ShardLeasesOptions } from "../../src/sharding/leases.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";

export interface Replica { leases: ShardLeases; lines: string[]; controller: AbortController; done: Promise<void> }

export function shardReplicas(): { env(): Env; track(work: { controller: AbortController; done: Promise<void> }): void; replica(id: string, options: Omit<ShardLeasesOptions, "id" | "namespace" | "group" | "logger" | "client"> & { client?: ShardLeasesOptions["client"] }): Replica } {
  let e: Env;
  const running: { controller: AbortController; done: Promise<void> }[] = [];
  beforeEach(async () => { e = await env({ crds: [] }); });
  afterEach(async () => {
    for (const r of running.splice(0)) { r.controller.abort(); await r.done; }
    await e.stop();
  });
  return {
    env: () => e,
    track: (work) => void running.push(work),
    replica(id, options) {
      const { logger, lines } = testLogger();
      const leases = new ShardLeases({ client: e.client, namespace: "default", group: "op", id, logger, ...options });
      const controller = new AbortController();
      const handle = { leases, lines, controller, done: leases.run(controller.signal) };
      running.push(handle);
      return handle;
    },
  };
}
