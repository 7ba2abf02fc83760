// Determinism and shrinking: the exploration is a pure function of the seed and the reference
// run; a reported seed replays the same schedule to the same failure; a failing schedule with
// faults that do not matter is shrunk to the one that does.

import { expect, test } from "bun:test";
import { Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import { explore, scheduleOf, type WriteSite } from "../../src/testing/simulate-schedule.ts";
import { failureOf, Widgets } from "./widgets.ts";

const sites: WriteSite[] = [
  { verb: "patch", plural: "widgets", name: "w1", nth: 1 },
  { verb: "create", plural: "configmaps", name: "w1-*", nth: 1 },
  { verb: "patch", plural: "widgets", subresource: "status", name: "w1", nth: 1 },
  { verb: "create", plural: "configmaps", name: "w1-*", nth: 2 },
];
const kinds = { crash: true, delay: true, merge: true, errors: true };
const input = { kinds, sites, plurals: ["widgets", "configmaps"], steps: 2 };

test("the schedules are a function of the seed: every crash point first, then single merges and delays", () => {
  const schedules = explore({ ...input, seed: 7, budget: 20 });
  expect(explore({ ...input, seed: 7, budget: 20 })).toEqual(schedules);
  expect(explore({ ...input, seed: 8, budget: 20 }).slice(8)).not.toEqual(schedules.slice(8));
  expect(schedules.slice(0, 4).map((s) => s.faults)).toEqual(sites.map((site) => [{ kind: "crash", after: site }]));
  expect(schedules[4]!.faults).toEqual([{ kind: "merge", plural: "widgets", step: 1 }]);
  expect(new Set(schedules.map((s) => JSON.stringify(s.faults))).size).toBe(20);
  expect(scheduleOf("7/13", input)).toEqual(schedules[13]!);
  expect(() => scheduleOf("seven", input)).toThrow('is not "<master seed>/<schedule index>"');
});

/** a create handler that counts Widgets in a ConfigMap, non-idempotently */
function counter(): Registry {
  const registry = new Registry();
  registry.on.create(Widgets, async ({ api }) => {
    const tally = await api.get(resource.configmaps, "tally");
    const count = Number(tally.data?.count ?? "0") + 1;
    await api.patch(resource.configmaps, "tally", { data: { count: String(count) } });
  }, { id: "count" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(resource.configmaps, { metadata: { name: "tally" }, data: { count: "0" } });
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
};

test("a reported seed replays the same schedule to the same failure", async () => {
  const found = await failureOf(simulate({ registry: counter(), scenario, seed: 3 }));
  const replayed = await failureOf(simulate({ registry: counter(), scenario, seed: found.schedule.seed }));
  expect(replayed.schedule).toEqual(found.schedule);
  expect(replayed.failure).toEqual(found.failure);
  expect(replayed.report).toContain(`replay: simulate({ ...options, seed: "${found.schedule.seed}" })`);
}, 60_000);

test("a failing schedule is shrunk to the fault that matters", async () => {
  const crash = { kind: "crash" as const, after: { verb: "patch", plural: "configmaps", name: "tally", nth: 1 } };
  const schedule = [
    { kind: "delay" as const, plural: "widgets", ms: 150 },
    crash,
    { kind: "merge" as const, plural: "configmaps", step: 1 },
  ];
  const found = await failureOf(simulate({ registry: counter(), scenario, schedule }));
  expect(found.schedule.faults).toEqual(schedule);
  expect(found.shrunk).toEqual([crash]);
  expect(found.failure.details).toContain('~ configmaps default/tally: data.count: "1" in the reference, "2" here');
  expect(found.report).toContain("faults (shrunk from 3):");
}, 60_000);
