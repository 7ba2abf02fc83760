// Lease loss mid-handler. The operator runs in lease mode; its create handler makes a Widget's two
// ConfigMaps with a pause between them. The lease fault takes its Lease right after a write: the
// instance freezes, the handler's signal aborts, and once the Lease is given back the handler is
// retried. The buggy version keeps its progress in memory ("this Widget is under way") before the
// work is done, and on the retry skips what the freeze interrupted: the second ConfigMap is never
// made. The fixed one keeps no such progress (its creates are idempotent) and converges.

import { expect, test } from "bun:test";
import { adopt, ApiError, Registry, sleep } from "kobun";
import { simulate, type Fault, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.startup(({ memo }) => {
    memo.underWay = new Set<string>();
  });
  registry.on.create(Widgets, async ({ name, body, api, memo, signal }) => {
    const underWay = memo.underWay as Set<string>;
    if (!fixed && underWay.has(name)) return; // "done already": true only if the handler was never interrupted
    underWay.add(name);
    const make = (suffix: string) => api.create(adopt(configMap(`${name}-${suffix}`), { owner: body }))
      .catch((error: unknown) => { if (!(error instanceof ApiError && error.code === 409)) throw error; });
    await make("a");
    if (!(await sleep(5, signal))) throw new Error("stopped: the operator froze");
    await make("b");
  }, { id: "children" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
};

const config = { peering: { mode: "lease", lease: { duration: 15, renewDeadline: 10, retryPeriod: 2 } } };
const afterFirstChild: Fault = {
  kind: "lease", after: { verb: "create", plural: "configmaps", name: "w1-a", nth: 1 },
};

test("fixed: the Lease taken mid-handler and given back, the operator re-acquires it and converges", async () => {
  const result = await simulate({ registry: operator(true), scenario, config, faults: { lease: true } });
  expect(result.runs.every((run) => run.ok)).toBe(true);
  expect(result.runs.some((run) => run.faults.some((fault) => fault.kind === "lease"))).toBe(true);
}, 60_000);

test("buggy: progress kept in memory across a freeze skips the interrupted work", async () => {
  const found = await failureOf(simulate({ registry: operator(false), scenario, config, schedule: [afterFirstChild] }));
  expect(found.failure.check).toBe("convergence");
  expect(found.failure.details).toContain("- configmaps default/w1-b: missing (the reference run has it)");
  expect(found.report).toContain("an admin took Lease default/default");
  expect(found.report).toContain("the operator froze (lost the lease)");
  expect(found.report).toContain("the admin gave the Lease back");
  expect(found.report).toContain("an admin took the operator's Lease (it froze mid-handler), then gave it back");
}, 60_000);

test("the lease fault is explored by default in lease mode, refused outside it", async () => {
  const onlyLease = { crash: false, delay: false, merge: false, errors: false, expire: false, recreate: false };
  const found = await failureOf(simulate({ registry: operator(false), scenario, config, faults: onlyLease }));
  expect(found.shrunk).toEqual([afterFirstChild]);
  await expect(simulate({ registry: operator(true), scenario, faults: { lease: true } }))
    .rejects.toThrow('the operator must run in lease mode: config: { peering: { mode: "lease" } }');
}, 60_000);
