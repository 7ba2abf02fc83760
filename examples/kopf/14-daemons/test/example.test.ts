import { expect, test } from "bun:test";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { startExample } from "../../testing.ts";
import { journal, registry, timing } from "../handlers/example.ts";

test("14-daemons: retried three times, then pinging until the object's deletion stops them", async () => {
  Object.assign(timing, { retryDelay: 0.1, ping: 0.1, accompany: 30 });
  journal.clear();
  await using kit = await startExample(registry);
  await kit.apply(KopfExamples, sampleObject());
  await kit.until(KopfExamples, "kopf-example-1", (o) => o.status?.message === "Failed 3 times.");
  await journal.has(`=> Ping from a sync daemon: field="value", retry=3`);
  await journal.has(`=> Ping from an async daemon: field="value"`);

  await kit.delete(KopfExamples, "kopf-example-1");
  await kit.gone(KopfExamples, "kopf-example-1"); // the finalizer waits for both daemons to stop
  expect(journal.lines).toContain("'background_sync' is stopped");
  expect(journal.lines).toContain("'background_async' is stopped");
});

test("14-daemons: the first daemon writes that it is finished once its time is up", async () => {
  Object.assign(timing, { retryDelay: 0.05, ping: 0.05, accompany: 0.2 });
  await using kit = await startExample(registry);
  const object = sampleObject("short");
  await kit.apply(KopfExamples, { ...object, metadata: { ...object.metadata, annotations: {} } }); // no async daemon
  const done = await kit.until(KopfExamples, "short", (o) => o.status?.message === "Accompanying is finished.");
  expect(done.status?.message).toBe("Accompanying is finished.");
});
