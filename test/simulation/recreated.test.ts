// Fault: an object deleted and recreated under the same name while the operator works on it.
// Class: delete-and-recreate name confusion. The operator labels each Widget's ConfigMap with the
// Widget's uid (what selects it later) and deletes it from a delete handler (no ownerReference:
// nothing else collects it). The buggy create handler takes an AlreadyExists for done: when the
// Widget is deleted with its finalizers stripped (its delete handler never runs) and made again
// under the same name, the old Widget's ConfigMap passes for the new one's, labelled with a uid
// no Widget has. The fix takes an existing ConfigMap for its own only when its label says so,
// and otherwise makes it this Widget's.

import { expect, test } from "bun:test";
import { ApiError, Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

const OWNER = "owner-uid"; // no dots: a volatile path below names it

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.create(Widgets, async ({ name, body, api }) => {
    const child = configMap(`${name}-data`, { replicas: String(body.spec.replicas ?? 0) });
    const labelled = { ...child, metadata: { ...child.metadata, labels: { [OWNER]: body.metadata.uid! } } };
    await api.create(labelled).catch(async (error: unknown) => {
      if (!(error instanceof ApiError && error.code === 409 && error.reason === "AlreadyExists")) throw error;
      if (!fixed) return; // "made already": but by whom?
      const found = await api.get(resource.configmaps, child.metadata.name);
      if (found.metadata.labels?.[OWNER] !== body.metadata.uid) await api.apply(labelled, { force: true });
    });
  }, { id: "data" });
  registry.on.delete(Widgets, async ({ name, api }) => {
    await api.delete(resource.configmaps, `${name}-data`).catch((error: unknown) => {
      if (!(error instanceof ApiError && error.code === 404)) throw error;
    });
  }, { id: "cleanup" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 2 } });
};

const invariants = {
  "each Widget's ConfigMap is labelled with its uid": async (world: World) => {
    const maps = await world.list(resource.configmaps);
    for (const widget of await world.list(Widgets)) {
      const child = maps.find((map) => map.metadata.name === `${widget.metadata.name}-data`);
      const label = child?.metadata.labels?.[OWNER];
      if (child && label !== widget.metadata.uid) return `${child.metadata.name} is labelled ${label}`;
    }
    return true;
  },
};

// the label is compared as the Widget it names (simulate reads a uid of the run's objects as their identity)
const options = { scenario, invariants };
const recreateOnly = { crash: false, delay: false, merge: false, errors: false, expire: false, recreate: true };

test("buggy: the old Widget's ConfigMap passes for the recreated one's", async () => {
  const { failure: found, shrunk, report } = await failureOf(
    simulate({ ...options, registry: operator(false), faults: recreateOnly }));
  expect(found.message).toContain(`invariant "each Widget's ConfigMap is labelled with its uid" broken`);
  expect(shrunk).toEqual([expect.objectContaining({ kind: "recreate", after: expect.objectContaining({ plural: "widgets", name: "w1" }) })]);
  expect(report).toContain("deleted (finalizers removed) and created anew by an admin: uid ");
}, 60_000);

test("buggy, with no invariant: convergence tells the label names a deleted Widget, not the one there", async () => {
  const { failure } = await failureOf(simulate({ scenario, registry: operator(false), faults: recreateOnly }));
  expect(failure.check).toBe("convergence");
  expect(failure.details).toEqual([`~ configmaps default/w1-data: metadata.labels.${OWNER}: ` +
    `"(the uid of widgets default/w1)" in the reference, "(the uid of a deleted widgets default/w1)" here`]);
}, 60_000);

test("fixed: a ConfigMap labelled for another uid is made this Widget's", async () => {
  const result = await simulate({ ...options, registry: operator(true) });
  expect(result.runs.some((run) => run.faults.some((fault) => fault.kind === "recreate"))).toBe(true);
}, 90_000);
