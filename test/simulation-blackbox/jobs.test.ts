// docs/testing.md, "The scenario and the checks": convergence leaves out what differs between two runs
// whatever the operator does. A Job's defaulted selector and template labels carry its own uid and
// name (as kube-apiserver's Job strategy writes them): an operator making Jobs, named or generated,
// must pass a fault-free comparison.

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { simulate } from "kobun/testing";
import { Gadgets } from "./helpers.ts";

const job = (metadata: Record<string, string>) => ({
  apiVersion: "batch/v1", kind: "Job", metadata,
  spec: { template: { spec: { containers: [{ name: "c", image: "busybox" }], restartPolicy: "Never" } } },
});

test("a Job's labels holding its own uid and generated name are no difference between runs", async () => {
  const registry = new Registry();
  registry.on.create(Gadgets, async ({ api, adopt, name }) => {
    await api.create(adopt(job({ name: `${name}-fixed` })));
    await api.create(adopt(job({ generateName: `${name}-` })));
  }, { id: "jobs", children: ["batch/v1/jobs"] });
  const outcome = await simulate({
    registry, schedules: 1, faults: { crash: false, delay: true, merge: false, errors: false, expire: false, recreate: false },
    scenario: async (world) => { await world.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 1 } }); },
  });
  expect(outcome.runs.map((run) => run.ok)).toEqual([true]);
}, 30_000);
