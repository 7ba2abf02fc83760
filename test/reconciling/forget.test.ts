// A sharded replica that gives a shard up forgets what it kept of its objects (their lives,
// memos): it hears none of their events while another replica owns the shard,
// deletions included, so whatever it kept would only grow with churn and go stale.

import { afterEach, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/index.ts";
import { ShardHolds } from "../../src/sharding/index.ts";
import { startHarness, type Harness } from "../handling/harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

test("forgetting the objects of a shard given up drops their lives and memos (their finished daemons went with the hold); the others are kept", async () => {
  const holds = new ShardHolds(1);
  holds.start(0);
  const registry = new Registry();
  registry.on.create("kobunexamples.kobun.dev/v1", ({ memo }) => void (memo.made = true), { id: "made" });
  registry.on.daemon("kobunexamples.kobun.dev/v1", () => {}, { id: "once" }); // returns: finished, kept until the object goes
  h = await startHarness({ registry, processor: { ownership: { hold: () => holds.enter(0) } } });
  const uids: string[] = [];
  for (const name of ["one", "two", "kept"]) uids.push((await h.create(name, {})).metadata.uid!);
  await h.until(() => uids.every((uid) => h!.processor.backgroundPhases(uid).once === "finished"));
  await h.processor.settled();
  expect(h.processor.trackedObjects).toBe(3);
  await holds.stop(0, 1000);
  h.processor.forget((object) => object.metadata.uid !== uids[2]);
  expect(h.processor.trackedObjects).toBe(1);
  expect([uids[0]!, uids[1]!].map((uid) => h!.processor.backgroundPhases(uid))).toEqual([{}, {}]);
});
