// kobun/testing's startOperator in the role of Kopf's KopfRunner: the operator runs in this
// process against a sandbox; the test makes, then deletes, an object and reads what it logged.
import { expect, test } from "bun:test";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { logged, logLine, startExample } from "../../testing.ts";
import { registry } from "../handlers/example.ts";

test("09-testing: the operator runs in-process, handles the object's life, and stops cleanly", async () => {
  const kit = await startExample(registry);
  try {
    await kit.apply(KopfExamples, sampleObject());
    await kit.logs.until(logLine("Something was logged here."));
    await kit.delete(KopfExamples, "kopf-example-1");
    await kit.gone(KopfExamples, "kopf-example-1");
  } finally {
    await kit.stop(); // rejects if the operator had failed meanwhile: KopfRunner's exit_code == 0
  }
  // KopfRunner's output: the line was logged once, on the object, by its handler; nothing went wrong.
  const [line, ...more] = logged(kit.logs, "Something was logged here.");
  expect(more).toEqual([]);
  expect(line).toContain("name=kopf-example-1 handler=create_fn");
  expect(kit.logs.lines.filter((l) => / ERROR /.test(l))).toEqual([]);
});
