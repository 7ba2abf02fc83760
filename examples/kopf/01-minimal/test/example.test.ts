import { expect, test } from "bun:test";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { logLine, startExample } from "../../testing.ts";
import { registry } from "../handlers/example.ts";

test("01-minimal: what create_fn returns is the new status", async () => {
  await using kit = await startExample(registry);
  await kit.apply(KopfExamples, sampleObject());
  const seen = await kit.until(KopfExamples, "kopf-example-1", (o) => o.status?.create_fn);
  expect(seen.status?.create_fn).toEqual({ message: "hello world" });
  const spec = JSON.stringify(sampleObject().spec);
  expect(await kit.logs.until(logLine(`And here we are! Creating: ${spec}`))).toContain("handler=create_fn");
});
