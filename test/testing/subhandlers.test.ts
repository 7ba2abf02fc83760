// Sub-handlers as an author tests them with kobun/testing: one per spec.items entry; the one that
// fails is retried alone, the others run exactly once, and the parent's result lands after all.

import { expect, test } from "bun:test";
import Type from "typebox";
import { defineResource, Registry, TemporaryError } from "kobun";
import { startOperator } from "kobun/testing";

test("three items, one failing twice then succeeding: the others run exactly once, the parent succeeds after", async () => {
  const registry = new Registry();
  const Batches = defineResource({
    group: "testing.kobun.dev", kind: "Batch", plural: "batches",
    schema: {
      spec: Type.Object({ items: Type.Array(Type.String()) }),
      status: Type.Object({
        create_fn: Type.Optional(Type.Object({ items: Type.Integer() })),
        done: Type.Optional(Type.Object({ a: Type.Optional(Type.Integer()), b: Type.Optional(Type.Integer()), c: Type.Optional(Type.Integer()) })),
      }),
    },
  });
  const attempts: string[] = [];
  registry.on.create(Batches, (ctx) => {
    for (const item of ctx.spec.items as ("a" | "b" | "c")[]) {
      ctx.subhandler(item, (sub) => { // each sub-handler's patch goes into the cycle's one merged patch
        attempts.push(`${item}#${sub.retry}`);
        if (item === "b" && sub.retry < 2) throw new TemporaryError(`${item} is not ready`, { delay: 0.05 });
        sub.patch.status.done = { ...sub.patch.status.done, [item]: sub.retry };
      });
    }
    return { items: ctx.spec.items.length };
  }, { id: "create_fn" });
  await using kit = await startOperator({ registry, logLevel: "silent" });
  await kit.apply(Batches, { metadata: { name: "three" }, spec: { items: ["a", "b", "c"] } });
  const done = await kit.until(Batches, "three", (o) => o.status?.create_fn);
  expect(done.status?.create_fn).toEqual({ items: 3 });
  expect(done.status?.done).toEqual({ a: 0, b: 2, c: 0 });
  expect(attempts).toEqual(["a#0", "b#0", "c#0", "b#1", "b#2"]);
});
