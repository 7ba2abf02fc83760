// The scenario of the stale-status corpus pairs (stale-status, stale-replace): another controller
// sets a Widget's status.ready, then a ConfigMap labelled for the Widget appears, which the operator
// reports in the status; and the failure a buggy operator's simulation must end with: ready wiped.

import { expect } from "bun:test";
import { resource } from "kobun";
import type { World } from "kobun/testing";
import { Widgets, failureOf } from "./widgets.ts";

export const readyThenConfigured = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 1 } });
  await world.patchStatus(Widgets, "w1", { ready: true });
  await world.apply(resource.configmaps, { metadata: { name: "w1-settings", labels: { widget: "w1" } }, data: {} });
};

/** the buggy operator's simulation fails as it must: ready wiped, found with the Widgets' watch lagging over step 2 */
export async function expectReadyWiped(simulation: Promise<unknown>): Promise<void> {
  const { failure: found, shrunk } = await failureOf(simulation);
  expect(found.check).toBe("convergence");
  expect(found.details).toContain("~ widgets default/w1: status.ready: true in the reference, absent here");
  expect(shrunk).toEqual([{ kind: "merge", plural: "widgets", step: 2 }]);
}
