import { expect, test } from "bun:test";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { logLine, logMessage, startExample } from "../../testing.ts";
import { registry } from "../handlers/example.ts";

/** What the handlers say (each its own sentence), in the order they said it. */
const said = (lines: readonly string[]) =>
  lines.map(logMessage).filter((m) => /^(Label|Annotation|Filter|Field) .*\.$/.test(m));

test("11-filtering-handlers: only the handlers whose filters match run", async () => {
  await using kit = await startExample(registry);
  await kit.apply(KopfExamples, sampleObject());
  // The creation handlers run one after the other in one cycle: once the last one that matches
  // has run, every filter of the cycle has been decided.
  await kit.logs.until(logLine("Field presence is satisfied."));
  await kit.logs.until(logLine("Field daemon is satisfied."));
  expect(new Set(said(kit.logs.lines))).toEqual(new Set([
    "Label is matching.", "Label is present.", "Label is absent.", "Label callback matching.",
    "Annotation is matching.", "Annotation is present.", "Annotation is absent.",
    "Filter satisfied.", "Field value is satisfied.", "Field presence is satisfied.",
    "Field daemon is satisfied.",
  ]));

  // The field's change from "value" to "changed" runs the change handler and stops the daemon.
  await kit.apply(KopfExamples, { ...sampleObject(), spec: { ...sampleObject().spec, field: "changed" } });
  await kit.logs.until(logLine("Field change is satisfied."));
  await kit.logs.until(logLine("Field daemon has stopped."));
  await kit.delete(KopfExamples, "kopf-example-1");
  await kit.gone(KopfExamples, "kopf-example-1");
});
