// The ports of Kopf's examples under simulation: each is created, changed and deleted under every
// crash point and the other faults, and must end as its fault-free run does, with every
// deletion completed (finalizers released). 02-children is Kopf's own at-least-once hole, ported
// as written: examples.test.ts shows simulate finding it, and its fix passing.

import { expect, test } from "bun:test";
import type { Registry } from "kobun";
import { simulate, type World } from "kobun/testing";
import { KopfExamples, sampleObject } from "../../examples/kopf/kopf.ts";

const crds = [new URL("../../examples/kopf/crd.yaml", import.meta.url).pathname];

/** created, its spec changed (field and items), deleted: each a step */
async function lifecycle(world: World): Promise<void> {
  const sample = sampleObject();
  await world.apply(KopfExamples, sample);
  await world.apply(KopfExamples, { ...sample, spec: { ...sample.spec, field: "changed", items: ["item1"] } });
  await world.delete(KopfExamples, sample.metadata.name);
}

type Loaded = { registry: Registry; memo?: Record<string, unknown> };
const examples: [string, () => Promise<Loaded>][] = [
  ["01-minimal", () => import("../../examples/kopf/01-minimal/handlers/example.ts")],
  ["03-exceptions", () => import("../../examples/kopf/03-exceptions/handlers/example.ts")],
  ["04-events", () => import("../../examples/kopf/04-events/handlers/example.ts")],
  ["05-handlers", () => import("../../examples/kopf/05-handlers/handlers/example.ts")],
  ["07-subhandlers", () => import("../../examples/kopf/07-subhandlers/handlers/example.ts")],
  ["08-events", () => import("../../examples/kopf/08-events/handlers/example.ts")],
  ["09-testing", () => import("../../examples/kopf/09-testing/handlers/example.ts")],
  ["11-filtering-handlers", () => import("../../examples/kopf/11-filtering-handlers/handlers/example.ts")],
  ["12-embedded", async () => ({
    ...(await import("../../examples/kopf/12-embedded/handlers/example.ts")),
    memo: (await import("../../examples/kopf/12-embedded/app.ts")).memo, // what its application gives run()
  })],
  ["14-daemons", () => import("../../examples/kopf/14-daemons/handlers/example.ts")],
  ["15-timers", () => import("../../examples/kopf/15-timers/handlers/example.ts")],
  ["16-indexing", () => import("../../examples/kopf/16-indexing/handlers/example.ts")],
  ["99-all-at-once", () => import("../../examples/kopf/99-all-at-once/handlers/example.ts")],
];

/** a settle fires the timers due within `horizon` s: a daemon logging every second needs few of them */
const horizons: Record<string, number> = {
  "11-filtering-handlers": 5, "14-daemons": 5, "15-timers": 5, "16-indexing": 6,
};

for (const [name, load] of examples) {
  test(`${name} passes every schedule of create, change and delete`, async () => {
    const { registry, memo } = await load();
    const horizon = horizons[name];
    const result = await simulate({
      registry, crds, scenario: lifecycle, ...(memo ? { memo } : {}), ...(horizon ? { horizon } : {}),
    });
    expect(result.runs.length).toBeGreaterThan(0);
    expect(result.runs.every((run) => run.ok)).toBe(true);
  }, 120_000);
}
