// A `when` filter's ctx.signal is lent to it as a handler's is: the cycle's signal is shared by
// every cycle under the same shutdown and freeze signals, so a listener a filter put on it would
// stay there until the next freeze, one per filter call, and fire then for calls long over.

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

test("listeners a when filter puts on ctx.signal die with the filter's call: a later freeze reaches none", async () => {
  const registry = new Registry();
  const toggle = new Toggle();
  let filtered = 0, heard = 0, handled = 0;
  registry.on.create("v1/configmaps", () => void handled++, {
    id: "c",
    when: (ctx) => {
      filtered++;
      ctx.signal.addEventListener("abort", () => heard++);
      return true;
    },
  });
  registry.on.delete("v1/configmaps", () => {}, { id: "d", when: (ctx) => (ctx.signal.addEventListener("abort", () => heard++), true) });
  const stop = new AbortController();
  const running = run({
    signal: stop.signal, client: e.client, registry, logger: testLogger().logger, toggle,
    settings: resolveSettings({ flags: { namespaces: ["default"], standalone: true } }),
  });
  try {
    for (const name of ["w1", "w2", "w3"]) {
      const response = await fetch(`${e.sandbox.url}/api/v1/namespaces/default/configmaps`, {
        method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name } }),
      });
      expect(response.status).toBe(201);
    }
    await eventually(() => handled === 3, "the three configmaps handled");
    expect(filtered).toBeGreaterThanOrEqual(3);
    toggle.freeze("test", "another operator took over");
    await Bun.sleep(50); // an abort's listeners run at once; this only lets a late one show
    expect(heard).toBe(0);
  } finally {
    toggle.unfreeze("test");
    stop.abort();
    await running;
  }
}, 15_000);
