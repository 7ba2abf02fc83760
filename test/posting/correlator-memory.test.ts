// What the Event correlator keeps per object (issue 15: memory per object known). Most objects
// only ever get one message per reason; their entry must not cost a Set (~0.6 KB of heap each,
// for up to 4,096 objects).

import { expect, test } from "bun:test";
import { heapSize } from "bun:jsc";
import { EventCorrelator } from "../../src/posting/correlator.ts";

test("an object with a single message per reason costs the correlator under 300 bytes of heap", () => {
  const objects = 4000;
  const uids = Array.from({ length: objects }, (_, i) => `0b9c1f8e-5d2a-4c7e-9f00-${String(i).padStart(12, "0")}`);
  const correlator = new EventCorrelator();
  Bun.gc(true);
  const before = heapSize();
  for (const uid of uids) correlator.keyOf({ uid, type: "Normal", reason: "Logging", message: "Handler 'create_fn' succeeded." });
  Bun.gc(true);
  const perObject = (heapSize() - before) / objects;
  expect(perObject).toBeLessThan(300); // 160 with a string, 412 with a Set
  // Still correlated: the same message counts into the same Event, a different one is its own.
  const again = correlator.keyOf({ uid: uids[0]!, type: "Normal", reason: "Logging", message: "Handler 'create_fn' succeeded." });
  const other = correlator.keyOf({ uid: uids[0]!, type: "Normal", reason: "Logging", message: "Handler 'update_fn' succeeded." });
  expect(other.key).not.toBe(again.key);
  expect(correlator.keyOf({ uid: uids[0]!, type: "Normal", reason: "Logging", message: "Handler 'create_fn' succeeded." }).key).toBe(again.key);
});
