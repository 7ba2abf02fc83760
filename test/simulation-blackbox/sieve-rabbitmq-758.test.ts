// Sieve's unobserved-state bug in rabbitmq/cluster-operator, as a kobun author would port it:
// https://github.com/rabbitmq/cluster-operator/issues/758.
// The operator refuses to scale a cluster down: it compares the replicas in the spec with the
// StatefulSet's and does nothing when the spec asks for fewer. Scaled 1 → 3 → 2, the cluster keeps
// 3. But an operator that never sees the 3 (its reconcile ran late, and only the latest state of the
// cluster was left to read) compares 2 with 1 and scales up to 2. A check in the reconcile cannot
// know what it missed; the refusal belongs where every write passes: the API server, here the
// operator's own validating webhook (the discussion, and Anvil's verified RabbitMQ
// controller, moved it into the CRD's validation for that reason).

import { expect, test } from "bun:test";
import { AdmissionError, adopt, defineResource, Registry, resource } from "kobun";
import { simulate, type World } from "kobun/testing";
import Type from "typebox";
import { failureOf } from "./helpers.ts";

const RabbitmqClusters = defineResource({
  group: "sieve.simulation.kobun.dev", kind: "RabbitmqCluster", plural: "rabbitmqclusters",
  schema: { spec: Type.Object({ replicas: Type.Integer() }), status: Type.Object({}) },
});

function statefulSet(cluster: string, replicas: number) {
  const labels = { "app.kubernetes.io/name": cluster };
  return {
    apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: `${cluster}-server`, labels },
    spec: {
      serviceName: `${cluster}-nodes`, replicas, selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: "rabbitmq", image: "rabbitmq:3.8" }] } },
    },
  };
}

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.reconcile(RabbitmqClusters, async ({ name, body, spec, api, cache, logger }) => {
    const current = cache.get(resource.statefulsets, `${name}-server`)?.spec?.replicas;
    if (current !== undefined && spec.replicas < current) {
      logger.warn(`Cluster Scale down not supported; tried to scale cluster from ${current} nodes to ${spec.replicas}`);
      return;
    }
    await api.apply(adopt(statefulSet(name, spec.replicas), { owner: body }));
  }, { owns: [resource.statefulsets] });
  if (fixed) {
    registry.on.validate(RabbitmqClusters, ({ object, oldObject }) => {
      const before = (oldObject as typeof object | undefined)?.spec?.replicas;
      if (before !== undefined && object.spec.replicas < before) {
        throw new AdmissionError(`scale down not supported: from ${before} to ${object.spec.replicas}`, { code: 422 });
      }
    }, { id: "no-scale-down", operations: ["UPDATE"] });
  }
  return registry;
}

const scenario = (refused: string[]) => async (world: World) => {
  for (const replicas of [1, 3, 2]) {
    await world.apply(RabbitmqClusters, { metadata: { name: "r1" }, spec: { replicas } })
      .catch((error: Error) => refused.push(error.message));
  }
};
const config = { webhooks: { url: "https://127.0.0.1:0" } }; // served on a free port, as `kobun dev` does

test("rabbitmq#758 buggy: the 3 never seen, 1 → 2 reads as a scale up, and the cluster shrinks", async () => {
  const refused: string[] = [];
  const { failure, shrunk, report } = await failureOf(simulate({ registry: operator(false), scenario: scenario(refused), config }));
  expect(shrunk, report).toEqual([{ kind: "merge", plural: "rabbitmqclusters", step: 2 }]);
  expect(failure.check).toBe("convergence");
  expect(failure.details).toEqual(["~ statefulsets default/r1-server: spec.replicas: 3 in the reference, 2 here"]);
  expect(refused).toEqual([]);
}, 60_000);

test("rabbitmq#758 fixed: the scale down refused by the API server, every schedule passes", async () => {
  const refused: string[] = [];
  const result = await simulate({ registry: operator(true), scenario: scenario(refused), config });
  expect(result.runs.length).toBe(16);
  expect(refused.length).toBe(result.runs.length + 1); // every run, and the reference run
  expect(refused[0]).toContain("scale down not supported: from 3 to 2");
}, 120_000);
