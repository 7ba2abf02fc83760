// docs/reconcile.md "What it watches" and docs/testing.md "The scenario and the checks", as an
// author meets them: a reconcile counts in its status the ConfigMaps labelled for its Gadget, woken
// through a `watches` map of the label. A ConfigMap relabelled from g1 to g2 must wake g1 too (the
// map's keys for its previous state), or g1 counts it for good, in the fault-free run as in every
// other. And an invariant of progress ("the note counts them"), broken at a step whose events a
// merge holds back, is reported with what was held, so the author can tell a stale view from a bug.

import { expect, test } from "bun:test";
import { Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import { failureOf, Gadgets } from "./helpers.ts";

function counting(): Registry {
  const registry = new Registry();
  registry.on.reconcile(Gadgets, ({ name, cache, patch }) => {
    patch.status.note = String(cache.list(resource.configmaps, { labelSelector: `gadget=${name}` }).length);
  }, {
    watches: [{
      resource: resource.configmaps,
      map: (cm) => (cm.metadata.labels?.gadget ? { name: cm.metadata.labels.gadget } : null),
    }],
  });
  return registry;
}

/** each Gadget's note against the ConfigMaps labelled for it now: a string when one is off */
async function miscounted(world: World): Promise<string | undefined> {
  const labelled = await world.list(resource.configmaps);
  for (const gadget of await world.list(Gadgets)) {
    const count = labelled.filter((c) => c.metadata.labels?.gadget === gadget.metadata.name).length;
    if (gadget.status?.note !== String(count)) return `${gadget.metadata.name}: note ${gadget.status?.note}, ${count} labelled`;
  }
  return undefined;
}

function scenario(finished: { done: boolean }) {
  return async (world: World) => {
    finished.done = false;
    await world.applyAll(Gadgets, [{ metadata: { name: "g1" }, spec: {} }, { metadata: { name: "g2" }, spec: {} }]);
    await world.apply(resource.configmaps, { metadata: { name: "s", labels: { gadget: "g1" } }, data: {} });
    await world.apply(resource.configmaps, { metadata: { name: "s", labels: { gadget: "g2" } }, data: {} });
    finished.done = true;
  };
}

test("a relabelled ConfigMap wakes the Gadget it left as well as the one it joined, under every schedule", async () => {
  const finished = { done: false };
  const result = await simulate({
    registry: counting(), scenario: scenario(finished),
    invariants: { "at the end, each note counts its ConfigMaps": async (world) => !finished.done || miscounted(world) },
  });
  expect(result.runs.length).toBe(16);
  expect(result.runs.some((run) => run.faults.some((fault) => fault.kind === "merge"))).toBe(true);
}, 60_000);

test("an invariant of progress broken while a merge holds the step's events back: the report says what was held", async () => {
  const merge = { kind: "merge" as const, plural: "configmaps", step: 2 };
  const { failure, report } = await failureOf(simulate({
    registry: counting(), scenario: scenario({ done: false }), schedule: [merge],
    invariants: { "each note counts its ConfigMaps": miscounted },
  }));
  expect(failure.check).toBe("invariant");
  expect(failure.message).toBe(`invariant "each note counts its ConfigMaps" broken after step 2: g1: note 0, 1 labelled`);
  expect(failure.details).toEqual([expect.stringMatching(
    /^events of configmaps held back at this check \(the merge over steps 2-3\): the operator had not seen this step's/)]);
  expect(report).toContain("\n  events of configmaps held back at this check");
}, 60_000);
