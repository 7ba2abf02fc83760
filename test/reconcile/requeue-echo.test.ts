// A reconcile that writes a status and asks for `requeueAfter` runs again when the requeue is due,
// not at once: the echo of its own status write (queued behind the running reconcile, it took the
// requeue's place in the queue) keeps the requeue's time, as docs/reconcile.md says ("not a status
// change, whoever wrote it"; "after that many seconds, or sooner if a change comes first"). A change
// of the spec still runs it at once, and a wake by a child runs it whatever its triggers.

import { expect, test } from "bun:test";
import { adopt, Registry, resource } from "../../src/index.ts";
import { startOperator } from "../../src/testing/index.ts";
import { Widgets } from "../simulation/widgets.ts";

test("its own status write's echo waits for the requeue; a spec change runs it sooner", async () => {
  const runs: string[] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, async ({ name, body, spec, status, patch, api }) => {
    runs.push(`replicas ${spec.replicas}, note ${status?.note}`);
    await api.apply(adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${name}-data` }, data: {} }, { owner: body }));
    patch.status.note = `run ${runs.length}`;                     // a new status each run: each write is an echo
    return { requeueAfter: 3600 };
  }, { owns: [resource.configmaps] });
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent", timeout: 15_000 });
  await kit.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 1 } });
  await kit.until(Widgets, "w1", (w) => w.status?.note === "run 1");
  await kit.advance(1);                                           // settled: the echoes have come and gone
  expect(runs).toEqual(["replicas 1, note undefined"]);
  await kit.advance(3600);                                        // the requeue is due
  expect(runs).toEqual(["replicas 1, note undefined", "replicas 1, note run 1"]);
  await kit.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 2 } });
  await kit.until(Widgets, "w1", (w) => w.status?.note === "run 3");   // a change: at once, no advance
  await kit.advance(1);
  expect(runs.length).toBe(3);
  await kit.delete(resource.configmaps, "w1-data");               // a wake by what it owns: at once too
  await kit.until(Widgets, "w1", (w) => w.status?.note === "run 4");
  await kit.advance(3599);
  expect(runs.length).toBe(4);
  await kit.advance(1);
  expect(runs.length).toBe(5);
}, 30_000);
