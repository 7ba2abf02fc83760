// docs/testing.md, "The scenario and the checks": convergence leaves out what differs between two runs
// whatever the operator does. A Job's defaulted selector and template labels carry its own uid and
// name (as kube-apiserver's Job strategy writes them): an operator making Jobs, named or generated,
// must pass a fault-free comparison; so must a child that repeats its parent's uid, or a namespace's,
// in its values (each read as the identity of the object it names). A volatile path may be a list of
// keys, for a key holding dots.

import { expect, test } from "bun:test";
import { Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import { failureOf, Gadgets, refusal } from "./helpers.ts";

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

test("another object's uid in a child's values compares as that object, in every run", async () => {
  const registry = new Registry();
  registry.on.create(Gadgets, async ({ api, uid, name }) => {
    const system = (await api.get(resource.namespaces, "kube-system")).metadata.uid!;   // a cluster id
    await api.apply({
      apiVersion: "v1", kind: "ConfigMap",
      metadata: { name: `${name}-data`, labels: { gadget: uid! }, annotations: { volume: `pvc-${uid}` } },
      data: { cluster: system },
    });
  }, { id: "data" });
  const outcome = await simulate({
    registry, schedules: 2, faults: { delay: false, merge: false, errors: false, expire: false, recreate: false },
    scenario: async (world) => { await world.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 1 } }); },
  });
  expect(outcome.runs.map((run) => run.ok)).toEqual([true, true]);
}, 30_000);

test("volatile: a list of keys, or a path with its dots escaped, names a key holding dots; a bad entry is refused", async () => {
  const registry = new Registry();
  let made = 0;
  registry.on.create(Gadgets, () => ({ "example.com/serial": `s${++made}` }), { id: "stamp" });   // new each run
  const scenario = async (world: World) => { await world.apply(Gadgets, { metadata: { name: "g1" }, spec: {} }); };
  const { failure } = await failureOf(simulate({ registry, scenario, schedules: 1 }));
  // the report prints the key's dots escaped: the path it shows may be given as it is
  expect(failure.details).toEqual([expect.stringContaining("status.stamp.example\\.com/serial")]);
  await simulate({ registry, scenario, schedules: 2, volatile: [["status", "stamp", "example.com/serial"]] });
  await simulate({ registry, scenario, schedules: 2, volatile: ["status.stamp.example\\.com/serial"] });
  expect(await refusal(simulate({ registry, scenario, volatile: [[]] }))).toBe(
    "simulate({ volatile }): must be an array of dotted paths or lists of keys, not [[]]");
}, 60_000);
