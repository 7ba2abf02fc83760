import { expect, test } from "bun:test";
import { Registry, TemporaryError } from "kobun";
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

test("07-subhandlers: a sub-handler that fails is retried alone; the finished one does not run again", async () => {
  // The example's shape, with item2's work failing once: what the loop of a single handler could not do.
  const flaky = new Registry();
  const runs: string[] = [];
  flaky.on.create(KopfExamples, (ctx) => {
    for (const item of ctx.spec.items ?? []) {
      ctx.subhandler(item, ({ retry }) => {
        runs.push(`${item}#${retry}`);
        if (item === "item2" && retry === 0) throw new TemporaryError("not yet", { delay: 0.1 });
      });
    }
  }, { id: "create_fn" });
  await using kit = await startExample(flaky);
  await kit.apply(KopfExamples, sampleObject());
  await kit.logs.until(logLine("Handler 'create_fn' succeeded."));
  expect(runs).toEqual(["item1#0", "item2#0", "item2#1"]);
  expect(logged(kit.logs, "Handler 'create_fn/item2' failed temporarily: not yet")).toHaveLength(1);
});
