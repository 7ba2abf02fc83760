// "operator ready: every watch has listed" (and onReady) means the watches listed: a stopping
// operator's streams end, which releases their readiness gates, and that must not be reported as
// readiness. Two ways a first-day user met it: a watch forbidden at start-up (the line came right
// before the fatal error) and a stop while the listed objects' handlers were still running.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { FatalError } from "../../src/runtime/exits.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Logger, memorySink } from "../../src/util/log.ts";
import { asAdmin, restrictedKubeconfig } from "./restricted.ts";

const ADMIN = "admin-token";
let sandbox: Sandbox;
beforeAll(async () => (sandbox = await startSandbox({ token: ADMIN })));
afterAll(() => sandbox.stop());

const settings = () => resolveSettings({ flags: { namespaces: ["default"], standalone: true } });

test("a watch forbidden at start-up ends run() with exit 5, and neither logs 'operator ready' nor calls onReady", async () => {
  const client = await KubeClient.connect({ kubeconfig: await restrictedKubeconfig(sandbox, ADMIN, "rns-home", {}) });
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "noop" });
  const sink = memorySink("info");
  let readyCalls = 0;
  try {
    const ended = await run({
      signal: new AbortController().signal, client, registry, logger: new Logger(sink), settings: settings(),
      onReady: () => readyCalls++,
    }).then(() => "resolved", (error: unknown) => error);
    expect(ended).toBeInstanceOf(FatalError);
    expect((ended as FatalError).exitCode).toBe(5);
  } finally {
    client.close();
  }
  expect(sink.lines.some((line) => line.includes("stopped"))).toBe(true);
  expect(sink.lines.filter((line) => line.includes("operator ready"))).toEqual([]);
  expect(readyCalls).toBe(0);
}, 15_000);

test("a stop while a listed object's handler still runs does not log 'operator ready' on the way out", async () => {
  await asAdmin(sandbox, ADMIN, "POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "rns-slow" } });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const registry = new Registry();
  const entered = Promise.withResolvers<void>();
  registry.on.create("v1/configmaps", async ({ signal }) => {
    entered.resolve();
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
  }, { id: "slow" });
  const sink = memorySink("info");
  const stop = new AbortController();
  let readyCalls = 0;
  const operator = run({ signal: stop.signal, client, registry, logger: new Logger(sink), settings: settings(), onReady: () => readyCalls++ });
  try {
    await entered.promise;
    expect(sink.lines.filter((line) => line.includes("operator ready"))).toEqual([]); // the listed object is not handled yet
    stop.abort();
    await operator;
  } finally {
    stop.abort();
    client.close();
  }
  expect(sink.lines.some((line) => line.includes("stopped"))).toBe(true);
  expect(sink.lines.filter((line) => line.includes("operator ready"))).toEqual([]);
  expect(readyCalls).toBe(0);
}, 15_000);
