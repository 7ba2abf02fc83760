// run()'s onStarted and onReady are the embedder's code: one that throws stops the operator as a
// signal would (handlers' signals abort, every task ends: "stopping", "stopped"), and run() rejects
// with what it threw. Before, a throwing onStarted made run() reject at once with the whole operator
// left running (watches, handlers, a peering record or Lease renewed for ever), and a throwing
// onReady was an unhandled rejection.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { configmaps, env, testLogger, type Env } from "../peering/helpers.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

const settings = () => resolveSettings({ flags: { namespaces: ["default"], standalone: true } });

for (const which of ["onStarted", "onReady"] as const) {
  test(`a throwing ${which} stops the operator and run() rejects with what it threw`, async () => {
    const name = `embedder-${which.toLowerCase()}`;
    await e.client.create(configmaps, "default", { metadata: { name } });
    const registry = new Registry();
    const handler = { started: false, aborted: false };
    registry.on.event("v1/configmaps", async ({ name: seen, signal }) => {
      // Held until its signal aborts; not where onReady is asked, which comes once the listed objects were handled.
      if (seen !== name || which === "onReady") return;
      handler.started = true;
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      handler.aborted = true;
    }, { id: "held" });
    const { logger, lines } = testLogger();
    const stop = new AbortController();
    const boom = new Error(`${which} failed`);
    const operator = run({
      signal: stop.signal, client: e.client, registry, logger, settings: settings(),
      [which]: () => {
        throw boom;
      },
    });
    try {
      const outcome = await Promise.race([
        operator.then(() => "resolved", (error: unknown) => error), Bun.sleep(20_000).then(() => "still running"),
      ]);
      expect(outcome).toBe(boom);
      expect(lines.some((line) => line.includes("INFO  stopped"))).toBe(true);
      expect(handler).toEqual({ started: handler.started, aborted: handler.started });
    } finally {
      stop.abort();
      await operator.catch(() => {});
    }
  }, 30_000);
}
