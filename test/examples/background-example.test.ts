// The daemon, timer and index of handlers/background.ts against the sandbox: the timer's result
// reaches status with what the index holds for the object's team, and a deletion stops the
// daemon before the object goes.

import { afterAll, expect, test } from "bun:test";
import { Indexes } from "../../src/handling/indexes.ts";
import { registry } from "../../src/declaring/registry.ts";
import "../../handlers/background.ts";
import { startHarness, type Harness } from "../handling/harness.ts";

let h: Harness | undefined;
afterAll(async () => void (await h?.stop()));

test("handlers/background.ts: the timer reports the team's index; the daemon holds the object until it stopped", async () => {
  // The runtime keeps one Indexes for all resources; a Reconciler built by hand is given it.
  h = await startHarness({ registry, processor: { indexes: new Indexes(registry.indexes) } });
  const heartbeat = { labels: { "kobun.dev/example": "heartbeat" } };
  await h.create("beat", { team: "blue" }, heartbeat);
  await h.create("mate", { team: "blue" });
  const reported = await h.until(() => h!.get("beat")?.status?.heartbeat_timer, 8000);
  expect([...reported.team].sort()).toEqual(["beat", "mate"]);
  expect(h.get("beat").metadata.finalizers).toContain("kobun.dev/finalizer");
  await h.client.delete(h.resource, "default", "beat");
  await h.until(() => h!.get("beat") === undefined, 8000);
}, 20_000);
