// How a report names a fault: the how-manieth request as English writes it (a reconcile's 21st
// status patch, not its "21th"), and the events an expiry lost (1 held event), as a user reads them in a CI log.

import { expect, test } from "bun:test";
import { adopt, Registry } from "kobun";
import { simulate, type World } from "kobun/testing";
import { describeFault } from "../../src/testing/simulate-schedule.ts";
import { configMap, failureOf, Widgets } from "./widgets.ts";

test("a fault's request is named by an English ordinal, whatever its count", () => {
  const named = (nth: number) => describeFault({ kind: "error", status: 500, verb: "patch", plural: "widgets", nth });
  const ordinals = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112].map((nth) => named(nth).split(" ")[2]);
  expect(ordinals).toEqual(
    ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st", "111th", "112th"],
  );
  const site = { verb: "patch", plural: "widgets", subresource: "status", name: "w1", nth: 22 };
  expect(describeFault({ kind: "crash", after: site }))
    .toBe("the operator killed right after its 22nd patch of widgets/status w1, then restarted");
});

test("an expiry's story counts the events it lost in English: 1 held event", async () => {
  // an edge-triggered update handler: it acts on the change into Migrating only, which the expiry loses
  const registry = new Registry();
  registry.on.update(Widgets, async ({ name, body, api, old, new: now }) => {
    if (old?.spec?.phase !== "Migrating" && now?.spec?.phase === "Migrating") {
      await api.apply(adopt(configMap(`${name}-migration`), { owner: body }));
    }
  }, { id: "migration" });
  const scenario = async (world: World) => {
    for (const phase of ["Pending", "Migrating", "Done"]) {
      await world.apply(Widgets, { metadata: { name: "w1" }, spec: { phase } });
    }
  };
  const expire = { kind: "expire" as const, plural: "widgets", step: 1 };
  const { report } = await failureOf(simulate({ registry, scenario, schedule: [expire] }));
  expect(report).toContain("widgets expire (410 Gone), 1 held event never delivered: the operator relists");
}, 60_000);
