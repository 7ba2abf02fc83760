import { expect, test } from "bun:test";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { startExample } from "../../testing.ts";
import { journal, registry } from "../handlers/example.ts";

test("08-events: every watch event reaches the event handler, though another one throws", async () => {
  journal.clear();
  await using kit = await startExample(registry);
  await kit.apply(KopfExamples, sampleObject());
  // "listed" when the operator's first LIST had not happened yet (startOperator resolves before it).
  const first = /^Event received: (added|listed) kopf-example-1$/;
  await journal.until((lines) => lines.some((l) => first.test(l)));
  await kit.apply(KopfExamples, { ...sampleObject(), spec: { field: "changed" } });
  await journal.has("Event received: modified kopf-example-1");
  await kit.delete(KopfExamples, "kopf-example-1"); // no finalizer: event handlers do not hold objects
  await journal.has("Event received: deleted kopf-example-1");
  expect(journal.lines[0]).toMatch(first);
  expect(journal.lines.slice(1)).toEqual([
    "Event received: modified kopf-example-1",
    "Event received: deleted kopf-example-1",
  ]);
});
