// A crash at the end of a step's window: the operator-sdk Memcached port asked to run again in 60 s
// (the horizon) after making its Deployment, was killed right after that run's status write, and
// the instance that started then, at the window's last instant, could not finish its first LIST:
// the Deployments' watch lagged (a `delay`), its lines due 300 ms past the window, which the settle
// would not move time to. The step never settled ("the operator never went quiet"), though the
// operator was only waiting on the network. A step is not over before its delayed events are in:
// time moves on to them.

import { expect, test } from "bun:test";
import { Registry, resource } from "kobun";
import { simulate } from "kobun/testing";
import { Widgets } from "./widgets.ts";

function operator(): Registry {
  const registry = new Registry();
  registry.on.reconcile(Widgets, ({ memo, patch }) => {
    if (memo.waited !== true) {
      memo.waited = true; // each instance starts afresh: its first run asks to come back in a minute
      return { requeueAfter: 60 };
    }
    patch.status.ready = true;
  }, { id: "ready", owns: [resource.configmaps] });
  return registry;
}

test("an instance restarted at the end of the window, its owned resource's watch delayed, settles", async () => {
  const outcome = await simulate({
    registry: operator(),
    memo: () => ({}),
    scenario: async (world) => {
      await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
    },
    schedule: [
      { kind: "crash", after: { verb: "patch", plural: "widgets", name: "w1", nth: 1, subresource: "status" } },
      { kind: "delay", plural: "configmaps", ms: 300 },
    ],
    settleTimeout: 3000,
  });
  expect(outcome.runs.map((run) => run.ok)).toEqual([true]);
}, 60_000);
