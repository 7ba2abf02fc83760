import { expect, test } from "bun:test";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { eventsUntil, hasEvent, startExample } from "../../testing.ts";
import { registry } from "../handlers/example.ts";

const RECOVERABLE = "An error that is supposed to be recoverable.";

test("03-exceptions: permanent errors fail at once, temporary ones are retried, retries run out", async () => {
  await using kit = await startExample(registry);
  await kit.apply(KopfExamples, sampleObject());
  // Kopf's e2e counts one success and three failures: here each outcome is an Event on the object.
  const outcomes = [
    ["Normal", "Handler 'eventual_success_with_a_few_messages' succeeded."],
    ["Warning", "Handler 'instant_failure_with_only_a_message' failed permanently: Fail once and for all."],
    ["Warning", "Handler 'eventual_failure_with_tracebacks' failed permanently: " +
      `handler eventual_failure_with_tracebacks failed 3 time(s): ${RECOVERABLE}`],
    ["Warning", `Handler 'instant_failure_with_traceback' failed permanently: ${RECOVERABLE}`],
  ] as const;
  const events = await eventsUntil(kit, (all) => outcomes.every(([type, message]) => hasEvent(all, message, type)));
  const temporary = (id: string) => events.find((e) => e.message.startsWith(`Handler '${id}' failed temporarily`));
  // Three temporary failures before the success (identical Events are counted into one) ...
  expect(temporary("eventual_success_with_a_few_messages")?.count).toBe(3);
  // ... two before the third and last attempt; none for the handlers that fail at once.
  expect(temporary("eventual_failure_with_tracebacks")?.count).toBe(2);
  expect(temporary("instant_failure_with_traceback")).toBeUndefined();
  expect(temporary("instant_failure_with_only_a_message")).toBeUndefined();
}, 20_000);
