// Fault: a request never answered (a timeout): the operator's client gives up after its deadline
// and the request is never made. Off by default (each costs its deadline, a second of real time):
// `faults: { timeout: true }`. Class: a failed request taken for success. The buggy create handler
// ignores every error of its child's create, meaning AlreadyExists only: a timed-out create leaves
// the Widget without its child for good. The fix ignores AlreadyExists only; kobun retries the rest.

import { expect, test } from "bun:test";
import { adopt, ApiError, Registry } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.create(Widgets, async ({ name, body, api }) => {
    await api.create(adopt(configMap(`${name}-data`), { owner: body })).catch((error: unknown) => {
      if (fixed && !(error instanceof ApiError && error.code === 409)) throw error;
    });
  }, { id: "data" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 1 } });
};
const timeoutsOnly = {
  crash: false, delay: false, merge: false, errors: false, expire: false, recreate: false, timeout: true,
};

test("buggy: a timed-out create taken for done leaves the Widget without its child", async () => {
  const { failure, shrunk, report } = await failureOf(
    simulate({ registry: operator(false), scenario, faults: timeoutsOnly }));
  expect(failure.details).toContain("- configmaps default/w1-data: missing (the reference run has it)");
  expect(shrunk).toEqual([{ kind: "timeout", verb: "create", plural: "configmaps", nth: 1 }]);
  expect(report).toContain("never answered: its client gives up after its deadline");
}, 60_000);

test("fixed: only AlreadyExists is done; a timeout fails the handler, which kobun retries", async () => {
  const result = await simulate({ registry: operator(true), scenario, faults: timeoutsOnly });
  expect(result.runs.some((run) => run.faults.some((fault) => fault.kind === "timeout"))).toBe(true);
}, 60_000);
