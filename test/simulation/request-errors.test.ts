// Fault: errors on any request. The exploration picks reads (GET, LIST) as well as writes, with
// 429 (Retry-After), 500 and 503 on reads and 409, 429 and 503 on writes; a read answered so is
// retried by kobun's client (reads are safe to repeat), a write answered 429 or 503 too (it was
// not made), so an operator sees them only as a delay. A 409 on a write from a competing
// writer is the operator's to handle: the buggy one below reads a ConfigMap, adds its Widget to
// it and writes it back with a patch conditional on the resourceVersion it read (optimistic concurrency), and takes a
// conflict for done; the fixed one lets it retry the handler, which reads afresh.

import { expect, test } from "bun:test";
import { ApiError, Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import { explore } from "../../src/testing/simulate-schedule.ts";
import { Widgets, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.create(Widgets, async ({ name, api }) => {
    const roster = await api.get(resource.configmaps, "roster");
    // the resourceVersion read makes the patch conditional: a write in between answers 409
    const patch = { metadata: { resourceVersion: roster.metadata.resourceVersion }, data: { [name]: "member" } };
    await api.patch(resource.configmaps, "roster", patch).catch((error: unknown) => {
      if (!fixed && error instanceof ApiError && error.code === 409) return; // "someone else wrote it"
      throw error;
    });
  }, { id: "enrol" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(resource.configmaps, { metadata: { name: "roster" }, data: {} });
  for (const name of ["w1", "w2"]) await world.apply(Widgets, { metadata: { name }, spec: {} });
};
const errorsOnly = { crash: false, delay: false, merge: false, errors: true, expire: false, recreate: false };

test("the exploration fails reads too, and throttles (429) and refuses (503) reads and writes", () => {
  const requests = [
    { verb: "list", plural: "widgets", name: "", nth: 1 }, { verb: "get", plural: "configmaps", name: "roster", nth: 1 },
    { verb: "patch", plural: "configmaps", name: "roster", nth: 1 },
  ];
  const sites = [{ verb: "patch", plural: "configmaps", name: "roster", nth: 1 }];
  const input = { seed: 5, budget: 60, kinds: errorsOnly, sites, requests, plurals: ["configmaps"], steps: 2 };
  const errors = explore(input).flatMap((schedule) => schedule.faults).filter((fault) => fault.kind === "error");
  const seen = new Set(errors.map((fault) => `${fault.verb} ${fault.status}`));
  for (const read of ["get", "list"]) expect([...seen].some((key) => key.startsWith(read))).toBe(true);
  expect([...seen].filter((key) => / (429|503)$/.test(key)).length).toBeGreaterThan(1);
  expect(seen.has("patch 409")).toBe(true);
});

test("buggy: a conflict on the roster's patch taken for done leaves a Widget off it", async () => {
  const { failure: found, shrunk } = await failureOf(simulate({ registry: operator(false), scenario, faults: errorsOnly }));
  expect(found.check).toBe("convergence");
  expect(found.details.join("\n")).toContain("configmaps default/roster: data.w");
  expect(shrunk).toEqual([expect.objectContaining({ kind: "error", status: 409, verb: "patch", plural: "configmaps" })]);
}, 60_000);

test("fixed: a conflict retries the handler; throttled and refused reads are waited out", async () => {
  const schedule = [
    { kind: "error" as const, status: 429 as const, verb: "get", plural: "configmaps", nth: 1 },
    { kind: "error" as const, status: 503 as const, verb: "list", plural: "widgets", nth: 1 },
    { kind: "error" as const, status: 409 as const, verb: "patch", plural: "configmaps", nth: 2 },
  ];
  const given = await simulate({ registry: operator(true), scenario, schedule });
  expect(given.runs.map((run) => run.ok)).toEqual([true]);
  await simulate({ registry: operator(true), scenario, faults: errorsOnly });
}, 90_000);

test("a fault kind simulate does not know is refused, naming the kinds it knows", async () => {
  const faults = { crash: true, shard: true } as Record<string, boolean>;
  const refused = await simulate({ registry: operator(true), scenario, faults }).catch((error: Error) => error);
  expect(String(refused)).toContain(
    'simulate({ faults }): no fault kind "shard" (the kinds: crash, delay, merge, errors, expire, recreate, lease, timeout)');
}, 60_000);
