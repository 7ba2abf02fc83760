// Sieve's intermediate-state bug in rabbitmq/cluster-operator, as a kobun author would port it:
// https://github.com/rabbitmq/cluster-operator/issues/782 (fixed by #838).
// To grow a cluster's volume, the operator compared the storage in the spec with the StatefulSet's
// volumeClaimTemplates; when they differed it deleted the StatefulSet (orphaning its pods), resized
// each PVC, and made the StatefulSet again with the new template. Killed between the delete and the
// resize, the restarted operator finds no StatefulSet, makes it with the new template, and from then
// on sees template == spec: the PVC is never resized. The fix reads the size to reach from each live
// PVC, not from the StatefulSet that a half-done resize had already rewritten.
// The sandbox runs no StatefulSet controller: the scenario plays it, making the claim of the first
// replica from the template it finds, as that controller would (and never resizing one it made).

import { expect, test } from "bun:test";
import { adopt, ApiError, defineResource, Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import Type from "typebox";
import { failureOf } from "./helpers.ts";

const RabbitmqClusters = defineResource({
  group: "sieve.simulation.kobun.dev", kind: "RabbitmqCluster", plural: "rabbitmqclusters",
  schema: { spec: Type.Object({ storage: Type.String() }), status: Type.Object({}) },
});

const LABEL = "app.kubernetes.io/name";
const claimOf = (cluster: string) => `persistence-${cluster}-server-0`;
type Claim = { spec?: { resources?: { requests?: Record<string, string> } } };
type Sts = { spec?: { volumeClaimTemplates?: Claim[] } };
const sizeOf = (claim: Claim | undefined) => claim?.spec?.resources?.requests?.storage;

function statefulSet(cluster: string, storage: string) {
  const labels = { [LABEL]: cluster };
  return {
    apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: `${cluster}-server`, labels },
    spec: {
      serviceName: `${cluster}-nodes`, replicas: 1, selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: "rabbitmq", image: "rabbitmq:3.8" }] } },
      volumeClaimTemplates: [{
        metadata: { name: "persistence", labels },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage } } },
      }],
    },
  };
}

/** a claim not made yet (the StatefulSet controller makes it) */
function absent(error: unknown): undefined {
  if (error instanceof ApiError && error.code === 404) return undefined;
  throw error;
}

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.reconcile(RabbitmqClusters, async ({ name, body, spec, api, cache }) => {
    const sts = `${name}-server`;
    const current = cache.get(resource.statefulsets, sts) as Sts | undefined;
    const template = sizeOf(current?.spec?.volumeClaimTemplates?.[0]);
    // buggy: the size reached so far is read from the StatefulSet; fixed: from the live claim itself
    const live = fixed ? sizeOf(await api.get(resource.persistentvolumeclaims, claimOf(name)).catch(absent)) : template;
    if (live !== undefined && live !== spec.storage) {
      if (current !== undefined && template !== spec.storage) {
        await api.delete(resource.statefulsets, sts, { propagationPolicy: "Orphan" });
      }
      const resize = { spec: { resources: { requests: { storage: spec.storage } } } };
      await api.patch(resource.persistentvolumeclaims, claimOf(name), resize);
    }
    await api.apply(adopt(statefulSet(name, spec.storage), { owner: body }));
  }, {
    owns: [resource.statefulsets],
    watches: [{
      resource: resource.persistentvolumeclaims,
      map: (claim) => (claim.metadata.labels?.[LABEL] ? { name: claim.metadata.labels[LABEL] } : null),
    }],
  });
  return registry;
}

/** the StatefulSet controller: the first replica's claim, made once from the template it finds */
async function makeClaims(world: World) {
  for (const sts of await world.list(resource.statefulsets)) {
    const cluster = sts.metadata.labels?.[LABEL];
    const template = (sts as Sts).spec?.volumeClaimTemplates?.[0];
    if (!cluster || !template || (await world.get(resource.persistentvolumeclaims, claimOf(cluster)))) continue;
    await world.apply(resource.persistentvolumeclaims, {
      metadata: { name: claimOf(cluster), labels: { [LABEL]: cluster } }, spec: template.spec as never,
    });
  }
}

const scenario = async (world: World) => {
  await world.apply(RabbitmqClusters, { metadata: { name: "r1" }, spec: { storage: "10Gi" } });
  await makeClaims(world);
  await world.apply(RabbitmqClusters, { metadata: { name: "r1" }, spec: { storage: "15Gi" } });
  await makeClaims(world); // a fault that held the first StatefulSet back: its claim is made now
};

test("rabbitmq#782 buggy: killed between the StatefulSet's delete and the resize, the PVC stays small", async () => {
  const { failure, shrunk, report } = await failureOf(simulate({ registry: operator(false), scenario }));
  expect(shrunk, report).toEqual([
    { kind: "crash", after: { verb: "delete", plural: "statefulsets", name: "r1-server", nth: 1 } },
  ]);
  expect(failure.check).toBe("convergence");
  expect(failure.details).toContain(`~ persistentvolumeclaims default/${claimOf("r1")}: ` +
    `spec.resources.requests.storage: "15Gi" in the reference, "10Gi" here`);
}, 60_000);

test("rabbitmq#782 fixed (#838): the size to reach is read from each live PVC, every schedule passes", async () => {
  const result = await simulate({ registry: operator(true), scenario });
  expect(result.runs.length).toBe(16);
  const killed = result.runs.find((run) => JSON.stringify(run.faults).includes(`"verb":"delete","plural":"statefulsets"`));
  expect(killed?.ok).toBe(true);
}, 60_000);
