import { expect, test } from "bun:test";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { logged, logLine, startExample } from "../../testing.ts";
import { registry } from "../handlers/example.ts";

test("07-subhandlers: a sub-handler per spec.items entry, each run once and tracked, then the parent", async () => {
  await using kit = await startExample(registry);
  await kit.apply(KopfExamples, sampleObject());
  await kit.logs.until(logLine("Handler 'create_fn' succeeded."));
  // Each item's work ran exactly once, under its own id, and succeeded before its parent did.
  for (const item of ["item1", "item2"]) {
    const work = logged(kit.logs, `=== Handling creation for ${item}. ===`);
    expect(work).toHaveLength(1);
    expect(work[0]).toContain(`handler=create_fn/${item}`);
    expect(logged(kit.logs, `Handler 'create_fn/${item}' succeeded.`)).toHaveLength(1);
  }
  const order = kit.logs.lines.filter((l) => /Handler '[^']+' succeeded\./.test(l)).map((l) => /'([^']+)'/.exec(l)![1]);
  expect(order).toEqual(["create_fn/item1", "create_fn/item2", "create_fn"]);
  // The cause completed: the progress records are gone (a failure's would have stayed).
  await kit.until(KopfExamples, "kopf-example-1",
    (o) => !!o.status?.kobun?.lastHandledConfiguration && !o.status.kobun.progress);
});
