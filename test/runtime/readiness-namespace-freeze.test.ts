// /readyz is 503 while the operator is frozen (README, production.md, peering.md), and that
// includes a freeze of a namespace it watches through a peering object of its own (`kobun freeze
// -n NS`, a peer of higher priority there): before, only the operator-wide toggle counted, so an
// operator run with `-n default` stayed ready while `kobun freeze -n default` held it.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { freezeManually, resumeManually } from "../../src/peering/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

test("a namespace frozen by its own peering object makes /readyz 503, naming it; the resume makes it 200 again", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "noop", labels: { scenario: "ns-freeze" } });
  const { logger, logged } = testLogger();
  const stop = new AbortController();
  let probeUrl = "";
  const ready = Promise.withResolvers<void>();
  const settings = resolveSettings({ flags: { namespaces: ["default"], peering: "ns-freeze", liveness: "http://127.0.0.1:0/healthz" } });
  const operator = run({
    signal: stop.signal, client: e.client, registry, logger, settings,
    onStarted: (info) => (probeUrl = info.probeUrl ?? ""), onReady: () => ready.resolve(),
  });
  const readyz = async () => {
    const response = await fetch(probeUrl.replace(/\/healthz$/, "/readyz"));
    return { status: response.status, body: await response.json() as { ready: boolean; waiting: string[]; frozen: Record<string, string> } };
  };
  const peering = { client: e.client, name: "ns-freeze", namespace: "default", group: "kobun.dev" as const };
  try {
    await ready.promise;
    expect(await readyz()).toEqual({ status: 200, body: { ready: true, waiting: [], frozen: {} } });
    await freezeManually({ ...peering, lifetime: 60, priority: 100, message: "maintenance", id: "ops" });
    await logged(/freezing: a peer with a higher priority is alive/, { timeout: 5_000 });
    const frozen = await readyz();
    expect(frozen.status).toBe(503);
    expect(frozen.body.ready).toBe(false);
    expect(Object.keys(frozen.body.frozen)).toHaveLength(1);
    expect(Object.keys(frozen.body.frozen)[0]).toStartWith("default/");
    expect(Object.values(frozen.body.frozen)[0]).toContain("ops has priority 100 > 0 (maintenance)");
    await resumeManually({ ...peering, id: "ops" });
    await logged(/resuming: no peer/, { timeout: 5_000 });
    expect(await readyz()).toEqual({ status: 200, body: { ready: true, waiting: [], frozen: {} } });
  } finally {
    stop.abort();
    await operator;
  }
}, 20_000);
