// Class: an unbounded retry storm. The buggy create handler retries its child's create at once on
// any error, meaning to ride out a brief refusal. Killed after the create commits (its answer
// lost), it runs again on restart, and the create now fails for good (409 AlreadyExists): it spins,
// one request after another with no backoff, and the operator never goes quiet. The fix takes
// AlreadyExists as done and lets any other error fail the handler, which kobun retries with backoff.

import { expect, test } from "bun:test";
import { adopt, ApiError, Registry } from "kobun";
import { simulate, type World } from "kobun/testing";
import { Widgets, configMap, failureOf } from "./widgets.ts";

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.create(Widgets, async ({ name, body, api, signal }) => {
    const child = adopt(configMap(`${name}-data`), { owner: body });
    if (fixed) {
      await api.create(child).catch((error: unknown) => {
        if (!(error instanceof ApiError && error.code === 409 && error.reason === "AlreadyExists")) throw error;
      });
      return;
    }
    // no backoff and no limit; only the handler's stop ends it (so the spin ends with the run)
    while (!signal.aborted) {
      try {
        await api.create(child);
        return;
      } catch {
        continue;
      }
    }
  }, { id: "data" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
};

test("buggy: a create retried with no backoff spins for good after a crash", async () => {
  const { failure: found, shrunk } = await failureOf(simulate({ registry: operator(false), scenario }));
  expect(found.check).toBe("settle");
  expect(found.message).toContain("the operator never went quiet");
  expect(shrunk).toEqual([{ kind: "crash", after: { verb: "create", plural: "configmaps", name: "w1-data", nth: 1 } }]);
}, 60_000);

test("fixed: AlreadyExists is done, other errors retry with backoff", async () => {
  const result = await simulate({ registry: operator(true), scenario });
  expect(result.runs.every((run) => run.ok)).toBe(true);
}, 60_000);
