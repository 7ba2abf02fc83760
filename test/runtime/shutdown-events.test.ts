// Seed 003 and issue 15: a stop right after a burst is not held up by the Events the burst
// queued. Events are best-effort: while the handlers finish (and at least a few ms), the poster
// sends what is queued or in flight, then drops the rest and says how many in one debug line.
// Here every Event POST stalls in the sandbox, so none can finish in time.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { configmaps, env, linesAt, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";

const OBJECTS = 30;
let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

test("a stop right after a burst returns within a bound although Events are queued and in flight, and says how many were dropped", async () => {
  await e.client.create({ group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: false }, null, { metadata: { name: "burst" } });
  // Longer than any bound below, short enough not to hold the sandbox up at its stop.
  e.sandbox.faults.stallNext(10 * OBJECTS, 3000, { verb: "create", plural: "events" });
  const registry = new Registry();
  let handled = 0;
  registry.on.create("v1/configmaps", ({ body, event }) => {
    event.info(body, "Burst", "handled in the burst");
    handled++;
  }, { id: "h" });
  const { logger, lines } = testLogger();
  const stop = new AbortController();
  const operator = run({
    signal: stop.signal, client: e.client, registry, logger,
    settings: resolveSettings({ flags: { namespaces: ["burst"], standalone: true } }),
  });
  let stopping = 0;
  try {
    for (let i = 0; i < OBJECTS; i++) await e.client.create(configmaps, "burst", { metadata: { name: `cm-${i}` } });
    await eventually(() => handled === OBJECTS, `${OBJECTS} objects handled`, 15_000);
  } finally {
    stopping = performance.now();
    stop.abort();
    await operator;
  }
  const ms = performance.now() - stopping;
  // Before: the shutdown waited 1 s for the stalled Events. Now: the handlers' close, the
  // watches' abort and a 10 ms window; the bound leaves room for a loaded machine.
  expect(ms).toBeLessThan(500);
  const dropped = linesAt(lines, "DEBUG").filter((l) => l.includes("events not posted at shutdown"));
  expect(dropped).toHaveLength(1);
  const [, queued, aborted] = /dropped=(\d+) aborted=(\d+)/.exec(dropped[0]!) ?? [];
  // Each object's own Event and its handler's success Event; 8 are in flight, the rest queued.
  expect(Number(queued) + Number(aborted)).toBeGreaterThanOrEqual(OBJECTS);
  expect(Number(aborted)).toBeGreaterThan(0);
}, 30_000);
