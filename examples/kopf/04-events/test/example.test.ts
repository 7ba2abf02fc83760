import { expect, test } from "bun:test";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { eventsUntil, hasEvent, startExample } from "../../testing.ts";
import { registry } from "../handlers/example.ts";

test("04-events: the handler's Events are posted about its object", async () => {
  await using kit = await startExample(registry);
  const object = await kit.apply(KopfExamples, sampleObject());
  const events = await eventsUntil(kit, (all) => hasEvent(all, "Some exception: Exception text.", "Error")
    && hasEvent(all, "Some message", "Warning") && hasEvent(all, "Handler 'create_fn' succeeded."));
  const mine = events.filter((e) => e.reason === "SomeReason");
  expect(mine.every((e) => e.involvedObject.uid === object.metadata.uid)).toBe(true);
  expect(mine.map((e) => `${e.type} ${e.message}`).sort()).toEqual([
    "Error Some exception: Exception text.", "Normal Some message", "SomeType Some message", "Warning Some message",
  ]);
});
