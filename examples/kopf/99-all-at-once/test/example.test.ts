import { expect, test } from "bun:test";
import { Registry, resource } from "kobun";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { eventsUntil, hasEvent, startExample } from "../../testing.ts";
import { allAtOnce, journal } from "../handlers/example.ts";

test("99-all-at-once: startup, creation (with a retry, Events, a child), update, field, deletion, cleanup", async () => {
  journal.clear();
  const kit = await startExample(allAtOnce(new Registry(), 0.02));
  try {
    expect(journal.lines).toEqual(["Starting in 0.02s...", "Starting retried..."]);
    const made = await kit.apply(KopfExamples, sampleObject());
    const done = await kit.until(KopfExamples, "kopf-example-1", (o) => o.status?.create_2);
    expect(done.status?.create_1).toEqual({ "job1-status": 100 });
    expect(done.status?.create_2).toEqual({ "job2-status": 100 });
    const events = await eventsUntil(kit, (all) => hasEvent(all, "Cannot do something", "Warning")
      && hasEvent(all, "Handler 'create_2' failed temporarily: Whoops!", "Warning"));
    const any = events.find((e) => e.reason === "AnyReason" && e.involvedObject.uid === made.metadata.uid);
    expect([any?.type, any?.message ?? ""]).toEqual(["Normal", ""]); // Kopf's kopf.info(body, reason=...): no message

    const special = await journal.until((lines) => lines.some((l) => l.startsWith("This pod is special for us: ")));
    const podName = special.find((l) => l.startsWith("This pod"))!.split(": ")[1]!;
    const pod = (await kit.get(resource.pods, podName))!;
    expect(pod.metadata.labels).toEqual({ application: "kopf-example-10", somelabel: "somevalue" });
    expect(pod.metadata.ownerReferences?.[0]?.uid).toBe(made.metadata.uid);

    await kit.apply(KopfExamples, { ...sampleObject(), spec: { ...sampleObject().spec, lst: [1, 2] } });
    await journal.has("Handling the FIELD = undefined -> [1,2]");
    await journal.has(`Handling the diff: [["add",["spec","lst"],null,[1,2]]]`);
    await kit.delete(KopfExamples, "kopf-example-1");
    await kit.gone(KopfExamples, "kopf-example-1");
  } finally {
    await kit.stop();
  }
  expect(journal.lines.slice(-2)).toEqual(["Cleaning up in 0.06s...", "Cleaned up."]);
});
