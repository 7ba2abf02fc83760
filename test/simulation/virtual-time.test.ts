// Virtual time: a run's clock moves only as the simulation moves it, so hours of an operator's
// schedule play out in milliseconds. The operator renews a Widget's certificate (status.note, the
// time of the renewal) every hour with `requeueAfter`. The buggy one renews only when the last
// renewal is *more* than an hour old and asks to run again only when it renewed: its hourly run
// comes at exactly the hour, renews nothing and asks for no other: the certificate goes stale. On
// the machine's clock a test would wait hours (and the exact hour would be luck); here
// `world.advance(3600)` is a step. The fix renews at an hour or more and always asks for the next.

import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { now, Registry } from "kobun";
import { simulate, type World } from "kobun/testing";
import { clock } from "../../src/util/index.ts";
import { failureOf, Widgets } from "./widgets.ts";

const HOUR = 3600 * 1000;

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.reconcile(Widgets, ({ status, patch }) => {
    const renewed = status?.note ? Date.parse(status.note) : -Infinity;
    const age = now().getTime() - renewed;
    if (fixed) {
      if (age >= HOUR) patch.status.note = now().toISOString();
      return { requeueAfter: age >= HOUR ? 3600 : (HOUR - age) / 1000 };
    }
    if (age <= HOUR) return undefined; // not due: nothing to do (and no reminder either)
    patch.status.note = now().toISOString();
    return { requeueAfter: 3600 };
  }, { id: "renew" });
  return registry;
}

const scenario = async (world: World) => {
  await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
  for (let hour = 1; hour <= 3; hour++) await world.advance(3600);
};

const invariants = {
  "the certificate is at most an hour old": async (world: World) => {
    const note = (await world.get(Widgets, "w1"))?.status?.note;
    if (note === undefined) return true; // not seen yet (a merge fault holds the Widget's event back a step)
    const age = now().getTime() - Date.parse(note);
    return age <= HOUR || `issued at ${note}, ${Math.round(age / 60_000)} virtual minutes ago`;
  },
};

test("buggy: an hourly renewal that comes at exactly the hour renews nothing and asks for no other", async () => {
  const started = performance.now();
  const { failure: found } = await failureOf(simulate({ registry: operator(false), scenario, invariants }));
  expect(found.check).toBe("invariant");
  expect(found.step).toBe(3); // the second hour: the first hourly run renewed nothing
  expect(found.message).toContain("issued at");
  expect(found.message).toContain("120 virtual minutes ago");
  expect(performance.now() - started).toBeLessThan(30_000); // hours of the operator's time, in real seconds
  expect(clock().virtual).toBe(false); // each run's clock is put back, a failing one's too
}, 60_000);

test("fixed: renewed every hour under every schedule, three virtual hours a run", async () => {
  // the renewal's time is a timestamp: a delayed watch event moves it by its delay
  const result = await simulate({ registry: operator(true), scenario, invariants, volatile: ["status.note"] });
  expect(result.runs.every((run) => run.ok)).toBe(true);
  expect(result.runs.length).toBeGreaterThan(5);
}, 60_000);

test("a reconcile asking to run again every millisecond is a storm of timers: the settle fails, saying so", async () => {
  const registry = new Registry();
  registry.on.reconcile(Widgets, () => ({ requeueAfter: 0.001 }), { id: "poll" });
  const scenario = async (world: World) => {
    await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
  };
  const { failure: found, report } = await failureOf(simulate({ registry, scenario, maxFirings: 200 }));
  expect(found.check).toBe("settle");
  expect(found.step).toBe(1);
  expect(found.message).toContain("timers kept firing: more than 200 in one settle");
  expect(report).toContain("the fault-free reference run fails already");
}, 60_000);

test("a run that cannot start rejects with its error, and puts the machine's clock back", async () => {
  const crd = join(mkdtempSync(join(tmpdir(), "kobun-sim-")), "bad.yaml");
  writeFileSync(crd, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: { name: bad }\n");
  const scenario = async (world: World) => {
    await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} });
  };
  const outcome = await simulate({ registry: new Registry(), scenario, crds: [crd] }).catch((error: unknown) => error);
  expect(outcome).toBeInstanceOf(Error);
  expect((outcome as Error).name).not.toBe("SimulationFailure");
  expect((outcome as Error).message).toContain('CustomResourceDefinition.apiextensions.k8s.io "bad" is invalid');
  expect(clock().virtual).toBe(false);
}, 60_000);
