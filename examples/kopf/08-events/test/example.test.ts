import { expect, test } from "bun:test";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { loggedTimes, logLine, startExample } from "../../testing.ts";
import { registry } from "../handlers/example.ts";

test("08-events: every watch event reaches the event handler, though another one throws", async () => {
  await using kit = await startExample(registry);
  await kit.apply(KopfExamples, sampleObject());
  // "added": startOperator resolves once the first LIST was handled, so the object comes by the watch.
  await kit.logs.until(logLine("Event received: added kopf-example-1"));
  await kit.apply(KopfExamples, { ...sampleObject(), spec: { field: "changed" } });
  await kit.logs.until(logLine("Event received: modified kopf-example-1"));
  await kit.delete(KopfExamples, "kopf-example-1"); // no finalizer: event handlers do not hold objects
  await kit.logs.until(logLine("Event received: deleted kopf-example-1"));
  await loggedTimes(kit.logs, logLine("Handler 'normal_event_fn' succeeded."), 3);
  const received = kit.logs.lines.filter((l) => / Event received: /.test(l))
    .map((l) => /Event received: \w+/.exec(l)![0]);
  expect(received).toEqual(["Event received: added", "Event received: modified", "Event received: deleted"]);
  // The failing handler failed at each of the three events, each logged, and was not retried.
  const oops = kit.logs.lines.filter((l) => l.includes("handler=event_fn_with_error") && l.includes("Oops!"));
  expect(oops).toHaveLength(3);
});
