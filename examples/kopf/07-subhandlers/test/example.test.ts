import { expect, test } from "bun:test";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { eventsUntil, hasEvent, startExample } from "../../testing.ts";
import { journal, registry } from "../handlers/example.ts";

test("07-subhandlers: one piece of work per spec.items entry, then the handler succeeds", async () => {
  journal.clear();
  await using kit = await startExample(registry);
  await kit.apply(KopfExamples, sampleObject());
  await eventsUntil(kit, (events) => hasEvent(events, "Handler 'create_fn' succeeded."));
  expect(journal.lines).toEqual(["=== Handling creation for item1. ===", "=== Handling creation for item2. ==="]);
});
