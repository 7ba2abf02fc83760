// kit.consistently (issue 35, item 6): a condition holds for a window of real time, proven on a
// watch of the object (every state in the window tested, the first LIST's included), failing at
// the first state that breaks it, not at the window's end.

import { expect, test } from "bun:test";
import Type from "typebox";
import { defineResource, Registry } from "kobun";
import { ConsistentlyError, startOperator } from "kobun/testing";

function counter() {
  const registry = new Registry();
  const Counters = defineResource({
    group: "testing.kobun.dev", kind: "Counter", plural: "counters",
    schema: {
      spec: Type.Object({ limit: Type.Integer() }),
      status: Type.Object({ create_fn: Type.Optional(Type.Object({ over: Type.Boolean() })) }),
    },
  });
  registry.on.create(Counters, ({ spec }) => ({ over: spec.limit > 10 }), { id: "create_fn" });
  return { registry, Counters };
}

/** A kit with one Counter `name` of `limit`, handled. */
async function handledCounter(name: string, limit: number) {
  const { registry, Counters } = counter();
  const kit = await startOperator({ registry, logLevel: "silent" });
  await kit.apply(Counters, { metadata: { name }, spec: { limit } });
  await kit.until(Counters, name, (c) => c.status?.create_fn);
  return { kit, Counters };
}

test("consistently resolves with the last state once the condition held for the whole window", async () => {
  const { kit: handled, Counters } = await handledCounter("calm", 3);
  await using kit = handled;
  const started = performance.now();
  const last = await kit.consistently(Counters, "calm", (c) => c?.status?.create_fn?.over === false, { for: 300 });
  expect(performance.now() - started).toBeGreaterThanOrEqual(299);
  expect(last?.spec.limit).toBe(3);
});

test("consistently fails at the first state that breaks the condition, naming it, long before the window ends", async () => {
  const { kit: handled, Counters } = await handledCounter("jumpy", 3);
  await using kit = handled;
  const started = performance.now();
  const holding = kit.consistently(Counters, "jumpy", (c) => c?.spec.limit === 3, { for: 20_000 }).catch((e) => e);
  await kit.sandbox.waitFor((r) => r.verb === "watch" && r.query.includes("metadata.name%3Djumpy"), 3000);
  await kit.apply(Counters, { metadata: { name: "jumpy" }, spec: { limit: 4 } });
  const error = await holding;
  expect(performance.now() - started).toBeLessThan(10_000);
  expect(error).toBeInstanceOf(ConsistentlyError);
  expect(error.message).toContain("counters.testing.kobun.dev default/jumpy");
  expect(error.message).toMatch(/false after \d+ ms of 20000/);
  expect(error.message).toContain('"limit":4');
  expect(error.state.spec.limit).toBe(4);
});

test("consistently tests the first state too: a condition false from the start fails at once", async () => {
  const { registry, Counters } = counter();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  await kit.apply(Counters, { metadata: { name: "big" }, spec: { limit: 30 } });
  const error = await kit.consistently(Counters, "big", (c) => c?.spec.limit === 3, { for: 20_000 }).catch((e) => e);
  expect(error).toBeInstanceOf(ConsistentlyError);
  expect(error.message).toContain('"limit":30');
});

test("consistently holds an absence: no object appears within the window", async () => {
  const { registry, Counters } = counter();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  expect(await kit.consistently(Counters, "never", (c) => c === undefined, { for: 200 })).toBeUndefined();
  const appearing = kit.consistently(Counters, "later", (c) => c === undefined, { for: 20_000 }).catch((e) => e);
  await kit.sandbox.waitFor((r) => r.verb === "watch" && r.query.includes("metadata.name%3Dlater"), 3000);
  await kit.apply(Counters, { metadata: { name: "later" }, spec: { limit: 1 } });
  expect(await appearing).toBeInstanceOf(ConsistentlyError);
});

test("consistently without a positive window is refused", async () => {
  const { registry, Counters } = counter();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  const error = await kit.consistently(Counters, "x", () => true, { for: 0 }).catch((e: Error) => e);
  expect((error as Error).message).toBe("consistently: { for } must be a positive number of ms, not 0");
});
