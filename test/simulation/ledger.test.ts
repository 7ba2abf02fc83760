// Class: a non-idempotent create. The buggy create handler appends the Widget to a ledger
// ConfigMap (a stand-in for any outside record: a DNS entry, a bill line): killed after that
// write and before kobun records the handler as done, the restarted operator runs it again and
// the Widget is entered twice. The fix makes the entry idempotent (a key per Widget).

import { expect, test } from "bun:test";
import { ApiError, Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.create(Widgets, async ({ name, api }) => {
    const ledger = await api.get(resource.configmaps, "ledger").catch((error: unknown) => {
      if (error instanceof ApiError && error.code === 404) return undefined;
      throw error;
    });
    const data = ledger?.data ?? {};
    const entries = data.entries ? data.entries.split(",") : [];
    const patch = fixed ? { data: { [`entry-${name}`]: "1" } } : { data: { entries: [...entries, name].join(",") } };
    if (ledger) await api.patch(resource.configmaps, "ledger", patch);
    else await api.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "ledger" }, ...patch });
  }, { id: "enter" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(resource.configmaps, { metadata: { name: "ledger" }, data: {} });
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
  await world.apply(Widgets, { metadata: { name: "w2" }, spec: {} });
};

const invariants = {
  "each Widget is entered once": async (world: World) => {
    const entries = (await world.get(resource.configmaps, "ledger"))?.data?.entries?.split(",") ?? [];
    return new Set(entries).size === entries.length || `the ledger reads ${JSON.stringify(entries)}`;
  },
};

test("buggy: a create handler re-run after a crash enters the Widget twice", async () => {
  const simulation = simulate({ registry: operator(false), scenario, invariants });
  const { failure: found, shrunk, report } = await failureOf(simulation);
  expect(found.message).toContain('invariant "each Widget is entered once" broken');
  expect(shrunk).toEqual([expect.objectContaining({ kind: "crash" })]);
  expect(report).toContain("killed here");
}, 60_000);

test("fixed: an entry keyed by the Widget is the same however often it is made", async () => {
  const result = await simulate({ registry: operator(true), scenario, invariants });
  expect(result.runs.length).toBeGreaterThan(result.crashPoints);
}, 90_000);

test("buggy: `once` tells a handler that ran twice to completion (kobun's record of it failed with a 500)", async () => {
  const faults = { crash: false, delay: false, merge: false, expire: false, recreate: false };
  const simulation = simulate({ registry: operator(false), scenario, once: ["enter"], faults });
  const { failure: found, shrunk } = await failureOf(simulation);
  expect(found.check).toBe("once");
  expect(found.details).toEqual([expect.stringMatching(/^handler 'enter' of w[12] succeeded 2 times \(by instances/)]);
  expect(shrunk).toEqual([expect.objectContaining({ kind: "error", status: 500, verb: "patch", plural: "widgets" })]);
}, 60_000);
