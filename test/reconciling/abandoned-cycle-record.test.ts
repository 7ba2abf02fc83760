// An object's record (reconciling/tracked.ts) is kept across its cycles. A cycle that a freeze
// abandoned (its handler deaf to the signal past the grace) may end after the object's next
// cycle has written and settled on that same record: its outcome is the lost one, which
// whileOurs applied when it gave the cycle up, and nothing of it may reach the record again
// (it reset the record to idle and forgot our last write, so the next relist's copy of that
// write was not known as our echo and ran a cycle of its own).

import { afterEach, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/registry.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { startHarness, type Harness } from "../handling/harness.ts";
import { eventually } from "../runtime/helpers.ts";

const EXAMPLES = "kobunexamples.kobun.dev/v1";
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

test("a cycle abandoned by a freeze that ends after the object's next cycle leaves that cycle's record as it settled", async () => {
  const toggle = new Toggle();
  let release!: () => void;
  const deaf = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  let abandonedReturned = false;
  const registry = new Registry();
  registry.on.create(EXAMPLES, async ({ patch }) => {
    if (++calls === 1) {
      h!.poke();
      await deaf; // ignores its signal: the freeze's grace runs out and the cycle is abandoned
      abandonedReturned = true;
      h!.poke();
      return;
    }
    patch.status = { second: "yes" };
    h!.poke();
  }, { id: "deaf" });
  h = await startHarness({ registry, processor: { ownership: { freezeSignal: () => toggle.runningSignal } }, settings: { peering: { freezeGracePeriod: 0.05 } } });
  const uid = (await h.create("reused", { size: 1 })).metadata.uid!;
  await h.until(() => calls === 1);
  const states = (h.processor as unknown as { states: ReadonlyMap<string, { phase: { kind: string }; wrote?: { rv: string } }> }).states;
  toggle.freeze("test", "another operator");
  await eventually(() => states.get(uid)?.phase.kind === "idle", "the cycle given up after the 50 ms grace", 3000);
  toggle.unfreeze("test");
  // A change after the resume: the object's next cycle, on the same record, writes and settles.
  await h.client.patch(h.resource, "default", "reused", { metadata: { labels: { changed: "yes" } } });
  await eventually(() => calls === 2 && states.get(uid)?.wrote !== undefined, "the next cycle written", 5000);
  await h.processor.settled();
  const settled = JSON.stringify(states.get(uid));
  release();
  await h.until(() => abandonedReturned || undefined, 3000);
  // Proving an absence, bounded: before, the record changed within microtasks of the handler's return.
  const deadline = Date.now() + 300;
  while (Date.now() < deadline && JSON.stringify(states.get(uid)) === settled) await Bun.sleep(10);
  expect(JSON.parse(JSON.stringify(states.get(uid)) ?? "null")).toEqual(JSON.parse(settled));
  expect(states.get(uid)?.wrote).toBeDefined();
}, 20_000);
