// kobun/testing's startOperator in the role of Kopf's KopfRunner: the operator runs in this
// process against a sandbox; the test makes, then deletes, an object and reads what it logged.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { eventsUntil, hasEvent, startExample } from "../../testing.ts";
import { registry } from "../handlers/example.ts";

const config = join(import.meta.dir, "../kobun.yaml");

test("09-testing: the operator runs in-process, handles the object's life, and stops cleanly", async () => {
  const kit = await startExample(registry, { flags: { config } });
  try {
    await kit.apply(KopfExamples, sampleObject());
    // KopfRunner's test reads the operator's output; here the log line is an Event on the object
    // (posting.logs in kobun.yaml). issue 33's kit.logs will let a test read the log itself.
    const events = await eventsUntil(kit, (all) => hasEvent(all, "Something was logged here.", "Normal"));
    expect(events.filter((e) => e.message === "Something was logged here.")).toHaveLength(1);
    await kit.delete(KopfExamples, "kopf-example-1");
    await kit.gone(KopfExamples, "kopf-example-1");
  } finally {
    await kit.stop(); // rejects if the operator had failed meanwhile: KopfRunner's exit_code == 0
  }
});
