// Sharding does not run on.reconcile yet (a child and its owner may land in different shards):
// an operator that asks for both does not start. run() rejects with the RegistrationError that
// names the reconcile and what to do instead, the error the CLI exits with code 3 for.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry, RegistrationError } from "../../src/declaring/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";

let e: Env;
beforeAll(async () => (e = await env({ crds: [] })));
afterAll(() => e.stop());

test("sharding with an on.reconcile fails at start with a RegistrationError naming the reconcile", async () => {
  const registry = new Registry();
  registry.on.reconcile("v1/configmaps", () => {}, { id: "sharded-reconcile" });
  const settings = resolveSettings({
    fileData: { sharding: { replicas: "auto", shards: 4 }, shutdown: { gracePeriod: "1s" } },
    flags: { namespaces: ["default"] },
  });
  const stop = new AbortController();
  const ran = run({ signal: stop.signal, client: e.client, registry, logger: testLogger().logger, settings, peerId: "replica" });
  // Bounded: an operator that started instead would run until stopped.
  const timer = setTimeout(() => stop.abort(), 10_000);
  const error = await ran.then(() => undefined, (thrown: unknown) => thrown);
  clearTimeout(timer);
  expect(error).toBeInstanceOf(RegistrationError);
  expect((error as Error).message).toContain('on.reconcile "sharded-reconcile": sharding (sharding.replicas other than 1) does not run reconciles yet');
  expect((error as Error).message).toContain("run one active replica (peering) instead");
}, 15_000);
