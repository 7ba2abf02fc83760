// Sieve's intermediate-state bug in Orange-OpenSource/casskop, as a kobun author would port it:
// https://github.com/Orange-OpenSource/casskop/issues/370 (fixed by #377).
// Scaling a rack down, casskop records its progress in the status: `Ongoing` while the last node
// is decommissioned, then `Finalizing` once it has left, then the node's PVC is deleted and the
// action is `Done`. The `Finalizing` mark was set in memory, the node removed, and the status
// written at the end of the reconcile (as kobun's `ctx.patch.status` is). Killed between the
// removal and that write, the restarted operator finds `Ongoing`, looks for the node, gets
// NotFound and fails every reconcile from then on: the PVC is never cleaned up and nothing the user
// asks for is done. The fix writes `Finalizing` first, in a reconcile of its own, and removes the
// node in the next one.
// The sandbox has no StatefulSet controller: the operator manages the node pods and their claims
// itself, where casskop scales a StatefulSet that removes the pod.

import { expect, test } from "bun:test";
import { adopt, ApiError, defineResource, Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import Type from "typebox";
import { failureOf } from "./helpers.ts";

const Action = Type.Object({ name: Type.String(), status: Type.String(), pod: Type.String() });
const CassandraClusters = defineResource({
  group: "sieve.simulation.kobun.dev", kind: "CassandraCluster", plural: "cassandraclusters",
  schema: {
    spec: Type.Object({ nodesPerRacks: Type.Integer() }),
    status: Type.Object({ phase: Type.Optional(Type.String()), lastAction: Type.Optional(Action) }),
  },
});

const pod = (name: string, cluster: string) => ({
  apiVersion: "v1", kind: "Pod", metadata: { name, labels: { cluster } },
  spec: { containers: [{ name: "cassandra", image: "cassandra:3.11" }] },
});
const claim = (name: string, cluster: string) => ({
  apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name, labels: { cluster } },
  spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
});

/** what a get of a node finds: the pod, or undefined once it is gone */
function gone(error: unknown): undefined {
  if (error instanceof ApiError && error.code === 404) return undefined;
  throw error;
}

/** casskop's resync loop while an action is under way (virtual seconds: the simulation fires it at once) */
const RESYNC = { requeueAfter: 5 };

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.reconcile(CassandraClusters, async ({ name, body, spec, status, api, cache, patch }) => {
    const action = status?.lastAction;
    if (action?.status === "Ongoing") {
      await api.get(resource.pods, action.pod);            // casskop returns any error here: NotFound too
      patch.status.lastAction = { ...action, status: "Finalizing" };
      if (fixed) return RESYNC;                            // #377: the mark is written before the node goes
      await api.delete(resource.pods, action.pod);         // buggy: the mark is written after the reconcile
      return RESYNC;
    }
    if (action?.status === "Finalizing") {
      const node = await api.get(resource.pods, action.pod).catch(gone);
      if (node) {
        await api.delete(resource.pods, action.pod);
        return RESYNC;
      }
      await api.delete(resource.persistentvolumeclaims, `data-${action.pod}`).catch(gone);
      patch.status.lastAction = { ...action, status: "Done" };
      return;
    }
    const nodes = cache.list(resource.pods, { labelSelector: `cluster=${name}` }).map((p) => p.metadata.name!).sort();
    if (nodes.length > spec.nodesPerRacks) {               // one node at a time, the last first
      patch.status.lastAction = { name: "ScaleDown", status: "Ongoing", pod: nodes.at(-1)! };
      return RESYNC;
    }
    for (let i = 0; i < spec.nodesPerRacks; i++) {
      if (!cache.get(resource.persistentvolumeclaims, `data-${name}-${i}`)) {
        await api.create(adopt(claim(`data-${name}-${i}`, name), { owner: body }));
      }
      if (!cache.get(resource.pods, `${name}-${i}`)) await api.create(adopt(pod(`${name}-${i}`, name), { owner: body }));
    }
    patch.status.phase = "Running";
  }, { owns: [resource.pods, resource.persistentvolumeclaims] });
  return registry;
}

// The last action is history: a run whose merged events never showed two nodes has none to record.
const volatile = ["status.lastAction"];

const scenario = async (world: World) => {
  await world.apply(CassandraClusters, { metadata: { name: "c1" }, spec: { nodesPerRacks: 2 } });
  await world.apply(CassandraClusters, { metadata: { name: "c1" }, spec: { nodesPerRacks: 1 } });
};

test("casskop#370 buggy: killed between the node's removal and the Finalizing mark, it fails for good", async () => {
  const { failure, shrunk, report } = await failureOf(simulate({ registry: operator(false), scenario, volatile }));
  expect(shrunk, report).toEqual([{ kind: "crash", after: { verb: "delete", plural: "pods", name: "c1-1", nth: 1 } }]);
  expect(failure.check).toBe("convergence");
  expect(failure.details).toEqual(["+ persistentvolumeclaims default/data-c1-1: left in the cluster, not in the reference run"]);
  // and why nothing is done: every reconcile of the cluster fails on the node that is gone
  expect(failure.failing).toEqual([expect.stringMatching(
    /^cassandraclusters default\/c1: Reconcile '[^']+' failed; retrying in \S+: .*pods "c1-1" not found/)]);
  expect(report).toContain("the operator was failing on these objects then (the last failed call of each):\n" +
    "  cassandraclusters default/c1: Reconcile '");
}, 60_000);

test("casskop#370 fixed (#377): Finalizing is written before the node goes, every schedule passes", async () => {
  const result = await simulate({ registry: operator(true), scenario, volatile });
  expect(result.runs.length).toBe(16);
  expect(result.runs.filter((run) => run.faults.some((fault) => fault.kind === "crash")).length).toBeGreaterThan(4);
}, 60_000);
