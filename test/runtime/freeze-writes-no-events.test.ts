// Issue 11, defect 2: after a freeze, nothing more is written for the handlers that were
// running, and that includes the Events reporting them. A handler that ends after the freeze
// (it honours its signal but still returns, or it throws) must not post "succeeded" or
// "failed temporarily" about an object this replica no longer owns: another replica may be
// handling it, and the results the Event speaks of were never written.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

async function post(path: string, body: unknown): Promise<void> {
  const response = await fetch(`${e.sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(response.status).toBe(201);
}

/** The messages of the Events posted about ConfigMap `name` in default. */
async function eventMessages(name: string): Promise<string[]> {
  const list = (await (await fetch(`${e.sandbox.url}/api/v1/namespaces/default/events`)).json()) as { items: any[] };
  return list.items.filter((ev) => ev.involvedObject?.name === name && ev.involvedObject?.kind === "ConfigMap").map((ev) => ev.message as string);
}

for (const ending of ["returns", "throws"] as const) {
  test(`a handler that ${ending} after the freeze posts no Event about it; after the resume, the next run's Event is posted`, async () => {
    const registry = new Registry();
    let calls = 0;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const name = `after-freeze-${ending}`;
    registry.on.create("v1/configmaps", async ({ signal, name: object }) => {
      if (object !== name) return;
      // The resumed run fails, so that its Event tells itself apart from any about the frozen run.
      if (++calls > 1) throw new Error("the resumed run");
      started();
      // Honours its signal, then ends anyway: with a result, or with an error.
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      if (ending === "throws") throw new Error("stopped by the freeze");
      return { first: true };
    }, { id: "h" });
    const toggle = new Toggle();
    const { logger, lines } = testLogger();
    const stop = new AbortController();
    const operator = run({
      signal: stop.signal, client: e.client, registry, logger, toggle,
      settings: resolveSettings({ flags: { namespaces: ["default"], standalone: true } }),
    });
    try {
      await post("/api/v1/namespaces/default/configmaps", { metadata: { name } });
      await running;
      toggle.freeze("test", "another operator took over");
      await eventually(() => lines.some((l) => l.includes("the cycle's results are not written") && l.includes(`name=${name}`)), "the frozen cycle to be discarded");
      toggle.unfreeze("test");
      await eventually(() => calls === 2, "the object to be handled again after the resume", 10_000);
      // Events are posted in the background, in order: once the resumed run's is there, any
      // Event about the frozen run would have been sent before it.
      for (const deadline = Date.now() + 10_000; !(await eventMessages(name)).some((m) => m.includes("the resumed run")); await Bun.sleep(20)) {
        if (Date.now() > deadline) throw new Error("the resumed run's Event was never posted");
      }
    } finally {
      stop.abort();
      await operator;
    }
    const messages = await eventMessages(name);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain("the resumed run");
    expect(lines.filter((l) => l.includes("Handler 'h'"))).toHaveLength(1);
  }, 20_000);
}
