import { expect, test } from "bun:test";
import { Registry, resource } from "kobun";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { eventsUntil, hasEvent, logLine, logMessage, startExample } from "../../testing.ts";
import { allAtOnce } from "../handlers/example.ts";

/** The lines of the example's own messages, in the order they were logged. */
const OWN = /^(Starting in |Starting retried|Cleaning up in |Cleaned up|Handling the |This pod is special)/;
const said = (lines: readonly string[]) => lines.map(logMessage).filter((message) => OWN.test(message));

test("99-all-at-once: startup (one retried), creation (with a retry, Events, a child), update, field, deletion, cleanup", async () => {
  const kit = await startExample(allAtOnce(new Registry(), 0.02));
  try {
    // The operator started once both startup handlers succeeded: the retried one after three temporary failures.
    expect(said(kit.logs.lines)).toEqual(["Starting in 0.02s...", "Starting retried..."]);
    const failures = kit.logs.lines.filter((line) => line.includes("startup=startup_fn_retried") && / ERROR /.test(line));
    expect(failures.map((line) => /error="([^"]*)"/.exec(line)?.[1]))
      .toEqual(["Going to succeed in 3s", "Going to succeed in 2s", "Going to succeed in 1s"]);
    const made = await kit.apply(KopfExamples, sampleObject());
    const done = await kit.until(KopfExamples, "kopf-example-1", (o) => o.status?.create_2);
    expect(done.status?.create_1).toEqual({ "job1-status": 100 });
    expect(done.status?.create_2).toEqual({ "job2-status": 100 });
    const events = await eventsUntil(kit, (all) => hasEvent(all, "Cannot do something", "Warning")
      && hasEvent(all, "Handler 'create_2' failed temporarily: Whoops!", "Warning"));
    const any = events.find((e) => e.reason === "AnyReason" && e.involvedObject.uid === made.metadata.uid);
    expect([any?.type, any?.message ?? ""]).toEqual(["Normal", ""]); // Kopf's kopf.info(body, reason=...): no message

    const special = await kit.logs.until(/This pod is special for us: /);
    const podName = /This pod is special for us: (\S+)/.exec(special)![1]!;
    const pod = (await kit.get(resource.pods, podName))!;
    expect(pod.metadata.labels).toEqual({ application: "kopf-example-10", somelabel: "somevalue" });
    expect(pod.metadata.ownerReferences?.[0]?.uid).toBe(made.metadata.uid);

    await kit.apply(KopfExamples, { ...sampleObject(), spec: { ...sampleObject().spec, lst: [1, 2] } });
    await kit.logs.until(logLine("Handling the FIELD = undefined -> [1,2]"));
    await kit.logs.until(logLine(`Handling the diff: [["add",["spec","lst"],null,[1,2]]]`));
    await kit.delete(KopfExamples, "kopf-example-1");
    await kit.gone(KopfExamples, "kopf-example-1");
  } finally {
    await kit.stop();
  }
  expect(said(kit.logs.lines).slice(-2)).toEqual(["Cleaning up in 0.06s...", "Cleaned up."]);
});
