import { expect, test } from "bun:test";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { startExample } from "../../testing.ts";
import { registry } from "../handlers/example.ts";

test("01-minimal: what create_fn returns is the new status", async () => {
  await using kit = await startExample(registry);
  await kit.apply(KopfExamples, sampleObject());
  const seen = await kit.until(KopfExamples, "kopf-example-1", (o) => o.status?.create_fn);
  expect(seen.status?.create_fn).toEqual({ message: "hello world" });
});
