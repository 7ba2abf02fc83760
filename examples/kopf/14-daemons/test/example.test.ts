import { expect, test } from "bun:test";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { logged, logLine, logTime, startExample } from "../../testing.ts";
import { registry, timing } from "../handlers/example.ts";

test("14-daemons: retried three times, then pinging until the object's deletion stops them, the async one later", async () => {
  Object.assign(timing, { retryDelay: 0.1, ping: 0.1, accompany: 30 });
  await using kit = await startExample(registry);
  await kit.apply(KopfExamples, sampleObject());
  // Each failure's patch was written before its restart (the last one stays until the daemon's next exit).
  await kit.until(KopfExamples, "kopf-example-1", (o) => o.status?.message === "Failed 3 times.");
  await kit.logs.until(logLine(`=> Ping from a sync daemon: field="value", retry=3`));
  await kit.logs.until(logLine(`=> Ping from an async daemon: field="value"`));
  // The spec the daemons read is live: a change shows in their next ping.
  await kit.apply(KopfExamples, { ...sampleObject(), spec: { ...sampleObject().spec, field: "changed" } });
  await kit.logs.until(logLine(`=> Ping from a sync daemon: field="changed", retry=3`));
  await kit.logs.until(logLine(`=> Ping from an async daemon: field="changed"`));

  const deleted = Date.now(); // the clock of the log lines' times
  await kit.delete(KopfExamples, "kopf-example-1");
  await kit.gone(KopfExamples, "kopf-example-1"); // the finalizer waits for both daemons to stop
  const [syncStopped] = logged(kit.logs, "'background_sync' is stopped");
  const [asyncStopped] = logged(kit.logs, "'background_async' is stopped");
  expect(syncStopped).toBeDefined();
  expect(asyncStopped).toBeDefined();
  // Asked to stop together: the sync one (on ctx.stopped) at once, the async one (on ctx.signal)
  // cancellationBackoff (1 s) later, pinging meanwhile.
  expect(logTime(asyncStopped!)).toBeGreaterThan(logTime(syncStopped!));
  expect(logTime(asyncStopped!) - deleted).toBeGreaterThanOrEqual(1000);
  const pingsAfter = kit.logs.lines
    .filter((l) => l.includes("=> Ping from an async daemon") && logTime(l) > logTime(syncStopped!));
  expect(pingsAfter.length).toBeGreaterThan(0);
}, 20_000);

test("14-daemons: the first daemon writes that it is finished once its time is up", async () => {
  Object.assign(timing, { retryDelay: 0.05, ping: 0.05, accompany: 0.2 });
  await using kit = await startExample(registry);
  const object = sampleObject("short");
  await kit.apply(KopfExamples, { ...object, metadata: { ...object.metadata, annotations: {} } }); // no async daemon
  const done = await kit.until(KopfExamples, "short", (o) => o.status?.message === "Accompanying is finished.");
  expect(done.status?.message).toBe("Accompanying is finished.");
  await kit.logs.until(logLine("Daemon 'background_sync' succeeded."));
  expect(logged(kit.logs, "=> Ping from an async daemon: field=\"value\"")).toEqual([]);
});
